#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Native test of the benchmark scripts' argument checks (make check): bad
# ARRAY_MB, ITERATIONS and PERCENT (and stream.sh's XFER_RUNS, mpi.sh's
# ROUNDS, PAIRS, SPLIT, IDLE and UNPINNED, wakeup.sh's PERCENT, ROUNDS,
# WAKE_US and TRANSPORTS) end each script with status 2 and a message
# before it needs root or touches the machine; lib.sh's himeno_budget_ok
# refuses a Himeno budget under 20 DLM pages and names the HIMENO_PAGE_KB
# that fits, and its wait_registered gives up on a dlmd that does not
# register within RUN_TIMEOUT, and its ko_fits tells a dlmem.ko built for
# another kernel by its vermagic, and its report keeps matplotlib's
# config in build/mplconfig; stream refuses a budget under three DLM
# pages and names the page size that fits; each benchmark program
# (${O:-build}/bench) prints its usage on stdout and exits 0 for --help,
# and (but umode_bench, whose options libdlm parses first) exits 2 with
# the usage on stderr for an unknown option.  Nothing
# here runs a benchmark.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bench=${O:-$here/../../build}/bench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TMPDIR=$tmp/t DLM_BENCH_OUT=$tmp/out
mkdir -p "$TMPDIR"
n=0 fail=0
# As root (CI), run the scripts as nobody: should a check ever let bad
# arguments through, need_root stops the script instead of a benchmark.
as=()
if [[ $(id -u) == 0 ]]; then
	as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	chmod 755 "$tmp"
	chmod 1777 "$TMPDIR"
fi

check() {	# check DESCRIPTION CONDITION...
	local d=$1
	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n - $d"
	else
		echo "not ok $n - $d"
		fail=1
	fi
}

# bad SCRIPT WANT ARGS...: SCRIPT ARGS... exits 2 saying WANT, leaving no
# temporary directory and writing no results.
bad() {
	local s=$1 want=$2 out rc
	shift 2
	out=$("${as[@]}" "$here/$s" "$@" 2>&1)
	rc=$?
	check "$s $*: status 2, '$want'" test "$rc" = 2 -a "${out/"$want"/}" != "$out"
	[[ $rc == 2 ]] || echo "# status $rc: $out"
	check "$s $*: nothing left behind" \
		test -z "$(ls -A "$TMPDIR")" -a ! -e "$DLM_BENCH_OUT"
}

echo "TAP version 13"
echo "1..84"

for s in stream.sh mpi.sh verbs.sh umode.sh replicas.sh; do
	bad "$s" "PERCENT '7.5'" 32 3 7.5
	bad "$s" "PERCENT '0'" 32 3 50 0
	bad "$s" "not 'x' and '3'" x 3 10
done
bad stream.sh "PERCENT '101'" 32 3 101
XFER_RUNS=0 bad stream.sh "XFER_RUNS '0'" 32 3 10
bad mpi.sh "not '32' and '-1'" 32 -1
ROUNDS=0 bad mpi.sh "ROUNDS must be a positive integer" 32 3 7
PAIRS=-1 bad mpi.sh "PAIRS must be a positive integer" 32 3 7
SPLIT=2 bad mpi.sh "SPLIT must be 0 or 1" 32 3 7
IDLE=x bad mpi.sh "IDLE must be 0 or 1" 32 3 7
UNPINNED=yes bad mpi.sh "UNPINNED must be 0 or 1" 32 3 7
PAIRS_ONLY=2 bad mpi.sh "PAIRS_ONLY must be 0 or 1" 32 3 7
bad wakeup.sh "PERCENT must be 1-99" 100
bad wakeup.sh "ROUNDS must be a positive integer" 7 0
WAKE_US=0 bad wakeup.sh "WAKE_US must be 1-10000000" 7
TRANSPORTS="tcp udp" bad wakeup.sh "TRANSPORTS 'udp'" 7

# The programs: --help on stdout with status 0, a bad option on stderr
# with status 2 (osu-fmpl stands for its MPI builds: the same source).
for p in stream himeno xfer_bench osu-fmpl sleeper; do
	out=$("$bench/$p" --help 2>"$tmp/err")
	rc=$?
	check "$p --help: status 0, usage on stdout, nothing on stderr" \
		test "$rc" = 0 -a "${out#usage: }" != "$out" -a ! -s "$tmp/err"
	[[ $rc == 0 ]] || echo "# status $rc: $(cat "$tmp/err")"
	out=$("$bench/$p" --no-such-option 2>&1 >/dev/null)
	rc=$?
	check "$p --no-such-option: status 2, usage on stderr" \
		test "$rc" = 2 -a "${out/usage: /}" != "$out"
done
# stream refuses a budget under one DLM page per array before it opens
# /dev/dlm (absent natively), naming the page size that fits.
out=$("$bench/stream" -m dlm -s 8 -l 7 2>&1)
check "stream -m dlm -s 8 -l 7 (one 1 MB page): status 2, names -p 572" \
	test $? = 2 -a "${out/*"triad needs one per array"*"-p 572 or less"*/x}" = x
out=$("$bench/sleeper" 0 2>&1)
check "sleeper 0: status 2, names the range" \
	test $? = 2 -a "${out/*"from 1 to 10000000"*/x}" = x
# umode_bench hands its arguments to dlm_startup() first, which needs the
# module (absent natively): --help must be answered before that.
out=$("$bench/umode_bench" --help 2>"$tmp/err")
check "umode_bench --help: status 0, both modes on stdout, nothing on stderr" \
	test $? = 0 -a "${out/*fault*triad*/x}" = x -a ! -s "$tmp/err"

# himeno_budget_ok, with Himeno's 96.981 MB.
budget() {	# budget PAGE_KB PCT...: status and message of the check
	(
		say() { echo "$*"; }
		# shellcheck source=selftests/bench/lib.sh
		. "$here/lib.sh"
		hmb=96.981 hpage=$1
		shift
		himeno_budget_ok "$@"
	) 2>&1
}
out=$(budget 128 50 25 10 7 5)
check "128 KB pages at 50-5%: accepted (5 MB = 40 pages)" test $? = 0 -a -z "$out"
out=$(budget 1024 100 5)
check "1 MB pages at 5%: refused, names 256 KB" \
	test $? = 2 -a "${out/*"5 DLM pages of 1024 KB"*"HIMENO_PAGE_KB to 256 or less"*/x}" = x
out=$(budget 384 7)
check "384 KB pages at 7% (18 pages): refused, names 356 KB" \
	test $? = 2 -a "${out/*"HIMENO_PAGE_KB to 356 or less"*/x}" = x
out=$(budget 356 7)
check "356 KB pages at 7% (20 pages): accepted" test $? = 0 -a -z "$out"
out=$(budget 130 7)
check "HIMENO_PAGE_KB 130: refused, not a multiple of 4" \
	test $? = 2 -a "${out/*"multiple of 4"*/x}" = x
out=$(budget 1024 100)
check "any page size at 100%: accepted (nothing is evicted)" test $? = 0 -a -z "$out"

# wait_registered, with a stand-in for dlmd that logs its pid as dlmd does
# and then registers (after 0.5 s), exits or hangs.
registered() {	# registered 'register'|'exit'|'hang': status, message, time
	(
		say() { echo "$*"; }
		# shellcheck source=selftests/bench/lib.sh
		. "$here/lib.sh"
		per_run_timeout=2
		: >"$tmp/dlmd.log"
		bash -c 'echo "prog=dlmd msg=\"starting\" pid=$$" >>"$1"
			sleep 0.5
			case $2 in
			register) echo "prog=dlmd msg=\"registered\"" >>"$1"; exec sleep 30 ;;
			hang) exec sleep 30 ;;
			esac' - "$tmp/dlmd.log" "$1" &
		job=$!
		t0=$SECONDS
		wait_registered tcp
		rc=$?
		echo "rc=$rc s=$((SECONDS - t0)) job=${job:-none}"
		[[ -n $job ]] && kill "$job"
		wait
	) 2>&1
}
out=$(registered register)
check "wait_registered: 0 once dlmd logs that it registered" \
	test "${out/*rc=0 s=[01] job=[0-9]*/x}" = x
out=$(registered exit)
check "wait_registered: 1 with 'did not start' when dlmd ends first" \
	test "${out/*"tcp: dlmd did not start:"*rc=1*job=none*/x}" = x
out=$(registered hang)
check "wait_registered: 1 after RUN_TIMEOUT, dlmd stopped, for a dlmd that hangs" \
	test "${out/*"did not register within 2 s"*rc=1 s=[23] job=none*/x}" = x
[[ $out == *rc=1* ]] || echo "# $out"

# ko_fits, which load_dlmem asks before insmod, with the default build's
# module (make check builds it first) and releases it is or is not for.
fits() {	# fits KO RELEASE: status and message
	(
		say() { echo "$*"; }
		# shellcheck source=selftests/bench/lib.sh
		. "$here/lib.sh"
		ko_fits "$@"
	) 2>&1
}
ko=$here/../../kmod/dlmem.ko
rel=$(PATH=$PATH:/usr/sbin:/sbin modinfo -F vermagic "$ko" 2>/dev/null)
rel=${rel%% *}
if [[ -n $rel ]]; then
	out=$(fits "$ko" "$rel")
	check "ko_fits: kmod/dlmem.ko fits $rel, its vermagic's release" \
		test $? = 0 -a -z "$out"
	out=$(fits "$ko" 6.0.0-other)
	check "ko_fits: refuses it for another release, names VM_KERNEL=6.0.0-other" \
		test $? = 1 -a "${out/*"built for kernel $rel, not 6.0.0-other"*"VM_KERNEL=6.0.0-other"*/x}" = x
else
	n=$((n + 2))
	echo "ok $((n - 1)) # SKIP no kmod/dlmem.ko (make modules)"
	echo "ok $n # SKIP no kmod/dlmem.ko (make modules)"
fi
out=$(fits "$tmp/none.ko" "$(uname -r)")
check "ko_fits: 1 for a missing module, saying to run make" \
	test $? = 1 -a "${out/*"no dlmem.ko at $tmp/none.ko: run make"*/x}" = x

# report, which runs the benchmarks' report scripts: ARGS passed through,
# matplotlib's config in build/mplconfig unless MPLCONFIGDIR is set, and
# the script run all the same when build/mplconfig cannot be made.
rep() {	# rep TOP ARGS...: report env_report.py ARGS... under TOP
	(
		# shellcheck disable=SC2030 # top: lib.sh's, in this subshell
		top=$1
		# shellcheck source=selftests/bench/lib.sh
		. "$here/lib.sh"
		report env_report.py "${@:2}"
	) 2>&1
}
for d in top rotop; do
	mkdir -p "$tmp/$d/selftests/bench"
	printf '%s\n' 'import os, sys' \
		'print(os.environ.get("MPLCONFIGDIR"), *sys.argv[1:])' \
		>"$tmp/$d/selftests/bench/env_report.py"
done
touch "$tmp/rotop/build"	# a file: no build/mplconfig under it
out=$(unset MPLCONFIGDIR; rep "$tmp/top" 'a b' c)
check "report: MPLCONFIGDIR=build/mplconfig, made; arguments kept" \
	test $? = 0 -a "$out" = "$tmp/top/build/mplconfig a b c" \
	-a -d "$tmp/top/build/mplconfig"
out=$(MPLCONFIGDIR=$tmp/own rep "$tmp/top" x)
check "report: an MPLCONFIGDIR set is kept" \
	test $? = 0 -a "$out" = "$tmp/own x" -a -d "$tmp/own"
out=$(unset MPLCONFIGDIR; rep "$tmp/rotop" x)
check "report: runs without MPLCONFIGDIR when build/mplconfig cannot be made" \
	test $? = 0 -a "$out" = "None x"
exit $fail
