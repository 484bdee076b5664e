#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# debug-guest.sh OUTDIR [MODULE] - guest side of `make check-debug`; runs
# INSIDE the VM booted on the debug kernel (vm-images/debug-kernel.sh).
#
# Runs every selftest with selftests/run-in-vm.sh OUTDIR MODULE (their
# timeouts scaled by DLM_TIMEOUT_SCALE, default 4 here: KASAN, lockdep and
# DEBUG_PAGEALLOC under TCG are slow), then asks kmemleak for a final scan
# (the module is unloaded by then, so leaks at unload are seen too) and
# writes OUTDIR/kmemleak.txt (the full report) and OUTDIR/kmemleak.tap:
# "not ok" when a leaked object's backtrace mentions dlmem, dlm_ or fmpl_
# or an address in module space that no longer resolves (an unloaded
# module: after rmmod, dlmem's own frames print as bare addresses).
# Leaks of the kernel itself are listed as TAP comments; vm-run's dmesg
# check still fails the run on them (kmemleak logs "N new suspected memory
# leaks").  Always exits 0, like run-in-vm.sh: the TAP files carry the
# results.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: debug-guest.sh OUTDIR [MODULE]}
module=${2:-$top/kmod/dlmem.ko}
export DLM_TIMEOUT_SCALE=${DLM_TIMEOUT_SCALE:-4}
mkdir -p "$out"

echo "# debug kernel $(uname -r); timeouts x$DLM_TIMEOUT_SCALE"
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
leak=/sys/kernel/debug/kmemleak

"$top/selftests/run-in-vm.sh" "$out" "$module"

scan() {	# two scans: an object is reported once it is old enough
	timeout 900 sh -c "echo scan >$leak" &&
		sleep 6 &&
		timeout 900 sh -c "echo scan >$leak"
}

{
	echo "TAP version 13"
	echo "1..1"
	if [[ ! -e $leak ]]; then
		echo "ok 1 # SKIP no $leak (kernel without CONFIG_DEBUG_KMEMLEAK)"
	elif ! scan; then
		echo "not ok 1 - kmemleak scan failed or timed out"
	else
		cat "$leak" >"$out/kmemleak.txt"
		# One record per "unreferenced object"; ours if the backtrace
		# names our symbols or a module address that no longer resolves.
		awk -v RS='unreferenced object' 'NR > 1 {
			n++
			if ($0 ~ /dlmem|dlm_|fmpl_|\] 0xffffffff[a-f][0-9a-f]+/) ours++
		} END { printf "%d %d\n", n, ours }' "$out/kmemleak.txt" >"$out/kmemleak.count"
		read -r total ours <"$out/kmemleak.count"
		if ((ours > 0)); then
			echo "not ok 1 - kmemleak: $ours of $total suspected leaks are dlmem.ko's (see $out/kmemleak.txt)"
		else
			echo "ok 1 - kmemleak: no leak of dlmem.ko ($total suspected leaks elsewhere in the kernel)"
		fi
		sed -n '1,60s/^/# /p' "$out/kmemleak.txt"
	fi
} >"$out/kmemleak.tap"
cat "$out/kmemleak.tap"
exit 0
