#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fmplrun_test.sh [BUILD_DIR] - the fmplrun launcher, natively (TAP), with
# /bin/sh -c programs as ranks: the environment of each rank, exit status
# propagation (first failure's status, 128+N for a signal, the failed rank
# named, the others terminated, SIGKILL 5 s after SIGTERM), --timeout,
# --key, forwarding of SIGTERM, usage errors (status 2) and --help; and an
# FMPL program without /dev/fmpl failing with the fix named.
# BUILD_DIR defaults to $LIBDLM_O (set by userlib.mk), else build/.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
O=${1:-${LIBDLM_O:-$top/build}}
run=$O/bin/fmplrun
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 fail=0

ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); echo "not ok $n - $*"; fail=1; }
skip() { n=$((n + 1)); echo "ok $n - $* # SKIP"; }
check() {	# check DESCRIPTION CMD... : ok if CMD succeeds
	local d=$1
	shift
	if "$@" >"$tmp/check" 2>&1; then ok "$d"; else
		notok "$d"; sed 's/^/# /' "$tmp/check"; fi
}
show() { sed 's/^/#   /' "$@"; }

# fr ARGS...: run fmplrun, stdout in $tmp/out, stderr in $tmp/err, status
# in $rc and wall time in seconds in $secs.
fr() {
	local t0=$EPOCHREALTIME
	"$run" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	secs=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
}
# between LO HI: LO <= $secs <= HI
between() { awk -v s="$secs" -v lo="$1" -v hi="$2" 'BEGIN { exit !(s >= lo && s <= hi) }'; }
expect() {	# expect RC [LO HI] [STDERR-REGEX]
	if [[ $rc != "$1" ]]; then
		echo "status $rc, expected $1 (${secs}s)"; show "$tmp/err"; return 1
	fi
	if (($# >= 3)) && ! between "$2" "$3"; then
		echo "took ${secs}s, expected $2..$3 s"; show "$tmp/err"; return 1
	fi
	if (($# == 2 || $# == 4)) && ! grep -Eq -- "${!#}" "$tmp/err"; then
		echo "stderr lacks /${!#}/:"; show "$tmp/err"; return 1
	fi
	return 0
}

echo "TAP version 13"
echo "1..16"

t_help() {
	fr --help && expect 0 &&
		grep -q '^Usage: fmplrun -np N' "$tmp/out" &&
		grep -q FMPL_RANK "$tmp/out" && grep -q -- --timeout "$tmp/out"
}
check "--help prints the usage and exits 0" t_help

t_usage() {
	local args
	for args in "" "-np" "-np 0" "-np abc" "-np 2" "-np 2 --key 0 true" \
		    "-np 2 --key x true" "-np 2 --timeout -1 true" \
		    "-np 2 --timeout 0 true" "-np 2 --frobnicate true" \
		    "-np 5000 true" "--key 7 true"; do
		# shellcheck disable=SC2086 # split on purpose
		fr $args
		expect 2 'fmplrun: .*' || { echo "for: fmplrun $args"; return 1; }
		grep -q 'Usage:' "$tmp/err" || { echo "no usage for: $args"; return 1; }
	done
	fr -np 2 --frobnicate true && expect 2 'unknown option --frobnicate' &&
	fr -np 0 true && expect 2 '1\.\.4096' &&
	fr true && expect 2 'ranks is missing'
}
check "usage errors exit 2 with a message and the usage line" t_usage

# shellcheck disable=SC2016 # expanded by the ranks' shell
t_env() {
	fr -np 4 sh -c 'echo "$FMPL_RANK $FMPL_SIZE $FMPL_KEY"' && expect 0 || return 1
	sort -n "$tmp/out" >"$tmp/sorted"
	[[ $(cut -d' ' -f1 "$tmp/sorted" | xargs) == "0 1 2 3" ]] || { show "$tmp/out"; return 1; }
	[[ $(cut -d' ' -f2 "$tmp/sorted" | sort -u) == 4 ]] || return 1
	[[ $(cut -d' ' -f3 "$tmp/sorted" | sort -u | wc -l) == 1 ]] || return 1
	key=$(cut -d' ' -f3 "$tmp/sorted" | head -1)
	[[ $key =~ ^0x[0-9a-f]+$ && $key != 0x0 ]] || { echo "key $key"; return 1; }
	fr -np 1 sh -c 'echo "$FMPL_KEY"' && expect 0 &&
		[[ $(cat "$tmp/out") != "$key" ]] || { echo "same key twice: $key"; return 1; }
}
check "each rank gets FMPL_RANK 0..N-1, FMPL_SIZE=N, one random non-zero FMPL_KEY per run" t_env

# shellcheck disable=SC2016
t_key() {
	fr -np 2 --key 0x2a sh -c 'echo "$FMPL_KEY"' && expect 0 &&
		[[ $(sort -u "$tmp/out") == 0x2a ]] &&
	fr -np 1 --key=123 sh -c 'echo "$FMPL_KEY"' && expect 0 &&
		[[ $(cat "$tmp/out") == 0x7b ]] &&
	fr --np=2 -- sh -c 'echo "$FMPL_SIZE"' && expect 0 &&
		[[ $(sort -u "$tmp/out") == 2 ]]
}
check "--key K (decimal or hex), --np=N and -- before PROGRAM" t_key

t_ok() { fr -np 3 true && expect 0 0 5; }
check "all ranks exit 0: fmplrun exits 0" t_ok

# shellcheck disable=SC2016
t_exit() {
	fr -np 3 sh -c 'if [ "$FMPL_RANK" = 1 ]; then sleep 0.2; exit 3; fi; exec sleep 30' &&
		expect 3 0 4 'rank 1 \(pid [0-9]+\) exited with status 3: terminating the other 2 ranks'
}
check "rank 1 exits 3: fmplrun exits 3 at once, names rank 1, ends the others" t_exit

# shellcheck disable=SC2016
t_first() {
	fr -np 3 sh -c 'case $FMPL_RANK in 0) exit 5;; 1) sleep 0.5; exit 7;; *) exec sleep 30;; esac' &&
		expect 5 0 4 'rank 0 .*status 5' &&
		! grep -q 'status 7' "$tmp/err"
}
check "the first failure's status wins (5 before 7)" t_first

# shellcheck disable=SC2016
t_signal() {
	fr -np 2 sh -c 'if [ "$FMPL_RANK" = 0 ]; then kill -KILL $$; fi; exec sleep 30' &&
		expect 137 0 4 'rank 0 .*killed by signal 9' &&
	fr -np 2 sh -c 'if [ "$FMPL_RANK" = 1 ]; then kill -SEGV $$; fi; exec sleep 30' &&
		expect 139 0 4 'rank 1 .*signal 11'
}
check "a rank killed by signal N: fmplrun exits 128+N and names the signal" t_signal

# shellcheck disable=SC2016
t_sigkill() {
	fr -np 2 sh -c 'if [ "$FMPL_RANK" = 0 ]; then sleep 0.5; exit 1; fi; trap "" TERM; while :; do sleep 0.1; done' &&
		expect 1 4.5 9 'rank 1 .*SIGKILL'
}
check "a rank that ignores SIGTERM gets SIGKILL 5 s later" t_sigkill

t_timeout() {
	fr -np 2 --timeout 1 sh -c 'exec sleep 30' &&
		expect 124 0.9 4 'timeout after 1 s: terminating 2 ranks' &&
	fr -np 2 --timeout=0.5 true && expect 0 0 0.5
}
check "--timeout S ends every rank after S s (status 124), not earlier" t_timeout

t_notfound() {
	fr -np 2 /nonexistent/prog && expect 127 'cannot run /nonexistent/prog' &&
	echo 'echo hello' >"$tmp/noexec" && chmod 0644 "$tmp/noexec" &&
	fr -np 1 "$tmp/noexec" && expect 126 "cannot run $tmp/noexec"
}
check "PROGRAM not found: 127, not executable: 126, with a message" t_notfound

t_forward() {
	local pid t0 left
	"$run" -np 2 sh -c 'exec sleep 30.4321' >"$tmp/out" 2>"$tmp/err" &
	pid=$!
	sleep 0.3
	t0=$SECONDS
	kill -TERM "$pid"
	wait "$pid"
	rc=$?
	((SECONDS - t0 <= 3)) || { echo "took $((SECONDS - t0)) s"; return 1; }
	[[ $rc == 143 ]] || { echo "status $rc"; return 1; }
	sleep 0.2
	left=$(pgrep -f -x 'sleep 30.4321' | wc -l)
	[[ $left == 0 ]] || { echo "$left ranks left"; return 1; }
}
check "SIGTERM to fmplrun reaches the ranks; fmplrun exits 143" t_forward

t_stdio() {
	# shellcheck disable=SC2016
	fr -np 2 sh -c 'echo "out $FMPL_RANK"; echo "err $FMPL_RANK" >&2' && expect 0 &&
		[[ $(sort "$tmp/out" | xargs) == "out 0 out 1" ]] &&
		[[ $(sort "$tmp/err" | xargs) == "err 0 err 1" ]]
}
check "ranks share fmplrun's stdout and stderr" t_stdio

t_args() {
	fr -np 1 sh -c 'printf "%s|" "$@"' prog 'a b' '' c && expect 0 &&
		[[ $(cat "$tmp/out") == "a b||c|" ]]
}
check "PROGRAM's arguments reach it unchanged" t_args

if [[ -e /dev/fmpl ]]; then
	skip "fmpl-pingpong without /dev/fmpl: /dev/fmpl exists here"
	skip "fmpl-pingpong without a launcher: /dev/fmpl exists here"
else
	t_nodev() {
		fr -np 2 "$O/bin/fmpl-pingpong" && expect 1 'rank [01] .*exited with status 1' &&
			grep -q 'cannot open /dev/fmpl.*modprobe dlmem' "$tmp/err" &&
			grep -q 'fmpl_init: no usable /dev/fmpl' "$tmp/err"
	}
	check "fmpl-pingpong under fmplrun without /dev/fmpl: status 1, says to load dlmem" t_nodev
	t_nolaunch() {
		env -u FMPL_RANK -u FMPL_SIZE -u OMPI_COMM_WORLD_RANK -u PMI_RANK \
			"$O/bin/fmpl-pingpong" >"$tmp/out" 2>"$tmp/err"
		rc=$? secs=0
		expect 1 'start the program with fmplrun -np N'
	}
	check "fmpl-pingpong without fmplrun: status 1, says to use fmplrun or mpirun" t_nolaunch
fi
exit $fail
