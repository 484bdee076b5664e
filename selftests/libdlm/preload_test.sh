#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# preload_test.sh - libdlm-preload.so under unmodified programs, with the
# real dlmd and a dlm-memserver over TCP on 127.0.0.1: preload_prog (the
# interposer's promises, checked word by word), then the Debian programs
# mbw, stress-ng --vm with --verify and sysbench memory, each with a
# working set many times its local budget, which must pass their own
# checks and swap through the memory server.  Then the refusals: no dlmd
# (ENOMEM, a message naming dlmd; DLM_PRELOAD_FALLBACK=1 runs locally).
# Needs root and dlmem.ko loaded (the VM).  TAP output.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export O=${DLM_BIN:-$here/../../build}
# shellcheck source=selftests/daemon/lib.sh
source "$here/../daemon/lib.sh"
pre=$build/lib/libdlm-preload.so
prog=$build/selftests/libdlm/preload_prog
LOCAL_MB=8		# each process's local budget

echo "TAP version 13"
if [[ $(id -u) != 0 || ! -c /dev/dlm ]]; then
	echo "1..0 # SKIP needs root and dlmem.ko loaded (run it with vm-images/vm-run)"
	exit 4
fi
need "$bin/dlmd" "$bin/dlm-memserver" "$pre" "$prog"
if with_asan "$pre"; then
	# make check-asan: AddressSanitizer owns malloc, and its runtime must
	# come first in LD_PRELOAD, so the interposer's malloc would not run.
	echo "1..0 # SKIP $pre is built with AddressSanitizer, which replaces malloc itself"
	exit 4
fi
echo "1..21"

start_memserver ms 512 wait && port=$MS_PORT ||
	{ echo "Bail out! dlm-memserver did not start"; exit 1; }
# Every process that allocates gets a space: LOCAL_MB of dlmd's frame pool
# (first line of dlmd's memfile) and up to 120 MB on the server.
printf '%s\n120 127.0.0.1:%s\n' "$LOCAL_MB" "$port" >"$tmp/memfile"
printf '64\n512 127.0.0.1:%s\n' "$port" >"$tmp/dlmd.memfile"
start_dlmd dlmd "$tmp/dlmd.memfile" && dlmd=$DLMD_PID ||
	{ echo "Bail out! dlmd did not register"; exit 1; }

# under NAME CMD...: CMD with the interposer; out/err in $tmp/NAME.*
under() {
	local name=$1
	shift
	env LD_PRELOAD="$pre" DLM_MEMFILE="$tmp/memfile" DLM_VERBOSE=1 \
		DLM_PRELOAD_MIN=1M timeout 600 "$@" \
		>"$tmp/$name.out" 2>"$tmp/$name.err"
}

# swapped NAME: the verbose exit lines show no SIGBUS or loss, and pages
# that left the budget: swapped in and out, or (arrays of one constant, as
# mbw's) kept by the kernel as same-filled pages.
swapped() {
	grep -Eq "exit: .* ([1-9][0-9]* swapins, [1-9][0-9]* swapouts, [0-9]+|[0-9]+ swapins, [0-9]+ swapouts, [1-9][0-9]*) same-filled, 0 SIGBUS, 0 lost" \
		"$tmp/$1.err"
}

# 1: the interposer's own checks, 64 MB working set vs 8 MB local
under prog "$prog" 64
rc=$?
subtests 14 cat "$tmp/prog.out"
if ((rc == 0)) && swapped prog; then
	ok "preload_prog: exit 0, swapped through the memory server"
else
	notok "preload_prog: exit $rc"
fi
diag "$tmp/prog.err"

# mbw: two arrays of 48 MB (96 MB, 12x the budget), memcpy/dumb/mcblock
if under mbw mbw -q -n 2 48 && grep -q "^AVG.*Method: MEMCPY" "$tmp/mbw.out" &&
   swapped mbw; then
	ok "mbw 48 (96 MB of arrays, 12x the local budget): all tests ran, swapped or kept same-filled"
else
	notok "mbw 48"
fi
diag "$tmp/mbw.out"
diag "$tmp/mbw.err"

# The module's counters (its workers _exit() without the verbose line).
counter() { cat "/sys/class/misc/dlm/stats/$1"; }

# stress-ng --vm: its workers check every pattern they write (--verify)
in0=$(counter swapins) bus0=$(counter sigbus) lost0=$(counter lost)
if under stressng stress-ng --vm 2 --vm-bytes 64M --vm-method all --verify \
	--vm-ops 8 --timeout 300s --metrics-brief &&
   ! grep -qiE "fail|verify error|detected" "$tmp/stressng.err" &&
   grep -q "successful run completed" "$tmp/stressng.err" &&
   (($(counter swapins) > in0 && $(counter sigbus) == bus0 &&
     $(counter lost) == lost0)); then
	ok "stress-ng --vm 2 --vm-bytes 64M --verify (8x the budget per worker): passed, swapped"
else
	notok "stress-ng --vm --verify"
fi
diag "$tmp/stressng.err"
echo "# module counters: $((in0)) -> $(counter swapins) swapins, sigbus $bus0 -> $(counter sigbus), lost $lost0 -> $(counter lost)"

# sysbench memory: a 64 MB block per thread, written and read in turn;
# --time=0: the total size ends the run, not sysbench's default 10 s
for mode in write read; do
	if under sysb-$mode sysbench memory --threads=2 --time=0 --memory-block-size=64M \
		--memory-total-size=512M --memory-oper=$mode run &&
	   grep -q "Total operations" "$tmp/sysb-$mode.out" &&
	   grep -q "512.00 MiB transferred" "$tmp/sysb-$mode.out" && swapped sysb-$mode; then
		ok "sysbench memory $mode, 2 threads x 64 MB (16x the budget): completed, swapped"
	else
		notok "sysbench memory $mode"
	fi
	diag "$tmp/sysb-$mode.out"
	diag "$tmp/sysb-$mode.err"
done

# Without dlmd: big allocations fail with ENOMEM and a message; with
# DLM_PRELOAD_FALLBACK=1 they come from glibc.
kill -TERM "$dlmd"
wait "$dlmd" 2>/dev/null
under nodlmd mbw -q -n 1 8
if grep -q "no DLM space:.*start dlmd -f" "$tmp/nodlmd.err" &&
   grep -q "Error allocating memory" "$tmp/nodlmd.out" "$tmp/nodlmd.err"; then
	ok "no dlmd: big allocations fail with ENOMEM, the message names dlmd"
else
	notok "no dlmd: ENOMEM and a message"
fi
diag "$tmp/nodlmd.out"
diag "$tmp/nodlmd.err"
if DLM_PRELOAD_FALLBACK=1 under fallback mbw -q -n 1 8 &&
   grep -q "^AVG.*MEMCPY" "$tmp/fallback.out" &&
   grep -q "use local memory" "$tmp/fallback.err"; then
	ok "no dlmd, DLM_PRELOAD_FALLBACK=1: runs on local memory, says so"
else
	notok "DLM_PRELOAD_FALLBACK=1"
fi
diag "$tmp/fallback.err"
exit $fail
