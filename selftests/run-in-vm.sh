#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run-in-vm.sh OUTDIR [MODULE] - run every selftest, kselftest style, as root inside
# the test VM (vm-images/vm-run boots it; make check-vm calls this).
#
# For each subsystem directory selftests/NAME/ with a `settings` file, each
# built program build/selftests/NAME/*_test and each script
# selftests/NAME/*_test.sh runs under the directory's timeout (times
# DLM_TIMEOUT_SCALE, default 1); its TAP goes to OUTDIR/NAME/PROGRAM.tap
# and its run time to OUTDIR/durations.txt.  MODULE (default
# kmod/dlmem.ko) is loaded first and must unload cleanly at the end (that
# is a test too).  DLM_BUILD names the build
# directory (default: build/ of the repository).  DLM_SELFTESTS, when set,
# lists the directories to run (e.g. "dlm fmpl"; default: all);
# DLM_SELFTESTS_SKIP lists directories not to run, each counted as one
# skip (OUTDIR/NAME/skipped.tap) so the summary shows it.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: run-in-vm.sh OUTDIR [MODULE]}
export DLM_BUILD=${DLM_BUILD:-$top/build}
export DLM_KO=${2:-$top/kmod/dlmem.ko} DLM_BIN=$DLM_BUILD
# Slow kernels (make check-debug: KASAN, lockdep under TCG) multiply every
# directory's timeout by DLM_TIMEOUT_SCALE (a whole number, default 1).
scale=${DLM_TIMEOUT_SCALE:-1}
[[ $scale =~ ^[1-9][0-9]*$ ]] || { echo "run-in-vm.sh: DLM_TIMEOUT_SCALE='$scale': want a whole number >= 1" >&2; exit 2; }
mkdir -p "$out"
rm -f "$out/durations.txt"

if [[ ! -d /sys/module/dlmem ]] && ! insmod "$DLM_KO"; then
	echo "run-in-vm.sh: cannot load $DLM_KO" >&2
fi

run_one() {	# run_one TIMEOUT TAPFILE CMD...
	local t=$1 tap=$2 rc start=$SECONDS
	shift 2
	echo "# selftests: $*"
	timeout --kill-after=10 "$t" "$@" >"$tap" 2>&1
	rc=$?
	# How long each took, for whoever trims the run's time.
	printf '%5d s  %s\n' $((SECONDS - start)) "${tap#"$out"/}" >>"$out/durations.txt"
	if ((rc == 124 || rc == 137)); then
		echo "not ok - $(basename "$1") timed out after ${t}s" >>"$tap"
	elif ((rc != 0 && rc != 4)) && ! grep -q '^not ok' "$tap"; then
		echo "not ok - $(basename "$1") exited with status $rc" >>"$tap"
	fi
	grep -E '^(not )?ok|^1\.\.0' "$tap" | sed 's/^/  /'
}

for dir in "$top"/selftests/*/; do
	name=$(basename "$dir")
	[[ -f $dir/settings ]] || continue
	[[ -z ${DLM_SELFTESTS:-} || " $DLM_SELFTESTS " == *" $name "* ]] || continue
	mkdir -p "$out/$name"
	if [[ " ${DLM_SELFTESTS_SKIP:-} " == *" $name "* ]]; then
		echo "1..0 # SKIP $name: not run here (DLM_SELFTESTS_SKIP)" |
			tee "$out/$name/skipped.tap" | sed 's/^/  /'
		continue
	fi
	timeout=$(sed -n 's/^timeout=//p' "$dir/settings")
	timeout=$((${timeout:-300} * scale))
	for prog in "$DLM_BUILD/selftests/$name"/*_test; do
		[[ -x $prog ]] || continue
		run_one "${timeout:-300}" "$out/$name/$(basename "$prog").tap" "$prog"
	done
	for sh in "$dir"/*_test.sh; do
		[[ -x $sh ]] || continue
		run_one "${timeout:-300}" "$out/$name/$(basename "$sh" .sh).tap" "$sh"
	done
done

{
	echo "TAP version 13"
	echo "1..1"
	if rmmod dlmem 2>"$out/rmmod.err"; then
		echo "ok 1 - dlmem.ko unloads after all tests"
	else
		echo "not ok 1 - dlmem.ko unloads after all tests: $(cat "$out/rmmod.err")"
	fi
} >"$out/module-unload.tap"
cat "$out/module-unload.tap"
if [[ -s $out/durations.txt ]]; then
	echo "# seconds per test, slowest first ($out/durations.txt):"
	sort -rn "$out/durations.txt" | head -n 10 | sed 's/^/#   /'
fi
exit 0
