# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# lib.sh - helpers for the daemon's native test scripts (sourced).
# Binaries come from ${O:-build}/; everything runs on 127.0.0.1 only.

# Used by the scripts that source this file:
# shellcheck disable=SC2034
{
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${O:-$top/build}
bin=$build/bin
tests=$build/daemon/tests
tmp=$(mktemp -d /tmp/dlm-daemon-test.XXXXXX)
pids=()
n=0
fail=0
}

cleanup() {
	local p
	exec 2>/dev/null	# no "Killed" job reports
	for p in "${pids[@]}"; do
		kill -CONT "$p" 2>/dev/null
		kill -KILL "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); echo "not ok $n - $*"; fail=1; }
skip() { n=$((n + 1)); echo "ok $n - $* # SKIP"; }
# diag FILE: show FILE as TAP comments.
diag() { sed 's/^/# /' "$1"; }

# need FILE...: bail out unless the binaries were built.
need() {
	local f
	for f in "$@"; do
		if [[ ! -x $f ]]; then
			echo "Bail out! $f missing: run 'make user' first"
			exit 1
		fi
	done
}

# vm_test_start: for a test of a running dlmd (the VM): sets rw (dlm_rw,
# ${DLM_RW} if set) and prints the TAP header; skips the test (exit 4)
# without root or dlmem.ko loaded, bails out unless dlmd, dlm-memserver
# and dlm_rw were built.
vm_test_start() {
	rw=${DLM_RW:-$build/selftests/remote/dlm_rw}
	echo "TAP version 13"
	if [[ $(id -u) != 0 || ! -c /dev/dlm ]]; then
		echo "1..0 # SKIP needs root and dlmem.ko loaded (run it with vm-images/vm-run)"
		exit 4
	fi
	need "$bin/dlmd" "$bin/dlm-memserver" "$rw"
}

# with_asan FILE: 0 if FILE links AddressSanitizer (make check-asan).
# The output is captured, not piped into grep -q: under pipefail ldd can
# die of SIGPIPE after grep's first match (Documentation/testing.rst).
with_asan() {
	[[ $(ldd "$1" 2>/dev/null) == *libasan* ]]
}

# start_memserver NAME MB [wait]: a dlm-memserver on ${MS_LISTEN:-
# 127.0.0.1:0} (port 0: any free one) with the options in the array
# MS_EXTRA, if set, logging to $tmp/NAME.log.  Sets MS_PID and MS_PORT; 1
# if it did not start.  Without "wait" the job is disowned (it may be
# killed without a job report; its status cannot be waited for).
start_memserver() {
	local name=$1 mb=$2 keep=${3:-} i
	MS_PORT=
	"$bin/dlm-memserver" --listen "${MS_LISTEN:-127.0.0.1:0}" --size "$mb" \
		${MS_EXTRA[@]+"${MS_EXTRA[@]}"} 2>"$tmp/$name.log" &
	MS_PID=$!
	pids+=("$MS_PID")
	[[ $keep == wait ]] || disown "$MS_PID"
	for ((i = 0; i < 200; i++)); do
		# The log may not exist yet: the job opens it after the fork.
		MS_PORT=$(sed -n 's/.*msg="listening" addr=.*:\([0-9]*\) .*/\1/p' \
			"$tmp/$name.log" 2>/dev/null)
		[[ -n $MS_PORT ]] && return 0
		kill -0 "$MS_PID" 2>/dev/null || break
		sleep 0.05
	done
	diag "$tmp/$name.log"
	return 1
}

# wait_log FILE PATTERN SECONDS: 0 once FILE has a line matching PATTERN
# (grep -q), checking every 0.1 s; 1 if not within SECONDS.
wait_log() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# policies PID: the scheduling policies of PID's threads (field 41 of
# /proc/PID/task/TID/stat: 0 SCHED_OTHER, 3 SCHED_BATCH, 5 SCHED_IDLE),
# sorted, each once, then how many threads there are: "3 threads=4".  The
# starvation guard of --sched idle (the thread named sched-guard) is left
# out of both and named after them with its own policy: "5 threads=3
# guard=3".
policies() {
	local t s guard=
	local -a statf
	for t in /proc/"$1"/task/*; do
		s=$(<"$t/stat") 2>/dev/null || continue
		# After "PID (COMM) " the fields count from 3.
		read -ra statf <<<"${s##*) }"
		if [[ $(<"$t/comm") == sched-guard ]]; then
			guard=" guard=${statf[38]}"
			continue
		fi
		echo "${statf[38]}"
	done >"$tmp/policies"
	sort -u "$tmp/policies" | tr '\n' ' '
	echo "threads=$(wc -l <"$tmp/policies")$guard"
}

# guard_prompt: 0 on a kernel from 6.6 (EEVDF) on, where the starvation
# guard's lift of a thread under SCHED_IDLE takes effect at once; before
# (CFS) the thread keeps the virtual runtime it ran up and may wait seconds
# more (daemon/cpusched.c), so the tests of a bounded delay beside busy
# loops are skipped there, with GUARD_WHY as the reason.
guard_prompt() {
	local major minor
	IFS=. read -r major minor _ <<<"$(uname -r)"
	GUARD_WHY="on $(uname -r) (CFS, before 6.6) a thread the guard lifts may wait seconds more (the daemons warn): see daemon/README.md, CPU policy"
	((major > 6 || (major == 6 && minor >= 6)))
}

# start_hogs [CPU]: other CPU-bound work for the daemons to share the node
# with, two busy loops per CPU (or two on CPU only), each pinned, at nice 0
# under SCHED_OTHER; their pids in HOGS (and pids, for the cleanup).
# stop_hogs ends them.
start_hogs() {
	local c cpus
	cpus=$(getconf _NPROCESSORS_ONLN)
	HOGS=()
	for ((c = 0; c < cpus * 2; c++)); do
		[[ -n ${1:-} && $((c % cpus)) != "$1" ]] && continue
		taskset -c $((c % cpus)) bash -c 'while :; do :; done' &
		HOGS+=("$!")
		pids+=("$!")
	done
}

stop_hogs() {
	kill -KILL "${HOGS[@]}"
	wait "${HOGS[@]}" 2>/dev/null
}

# start_dlmd NAME MEMFILE [ARGS...]: dlmd -f MEMFILE ARGS in the
# background, logging to $tmp/NAME.log.  0 once it registered with the
# kernel (DLMD_PID set); 1, its log shown, if it exited or did not
# register within 10 s.
start_dlmd() {
	local name=$1 mf=$2 i
	shift 2
	"$bin/dlmd" -f "$mf" "$@" 2>"$tmp/$name.log" &
	DLMD_PID=$!
	pids+=("$DLMD_PID")
	for ((i = 0; i < 100; i++)); do
		grep -q 'msg="registered"' "$tmp/$name.log" 2>/dev/null && return 0
		kill -0 "$DLMD_PID" 2>/dev/null || break
		sleep 0.1
	done
	diag "$tmp/$name.log"
	return 1
}

# subtests EXPECTED CMD...: run a TAP-producing CMD and re-number its
# results into this stream; EXPECTED results must appear and CMD exit 0.
subtests() {
	local want=$1 got=0 line rc out
	shift
	out=$tmp/sub.$n
	"$@" >"$out" 2>"$out.err"
	rc=$?
	while IFS= read -r line; do
		if [[ $line =~ ^(not\ )?ok\ [0-9]+\ (.*)$ ]]; then
			got=$((got + 1))
			n=$((n + 1))
			echo "${BASH_REMATCH[1]}ok $n ${BASH_REMATCH[2]}"
			if [[ -n ${BASH_REMATCH[1]} ]]; then
				fail=1
			fi
		elif [[ $line == \#* ]]; then
			echo "$line"
		fi
	done <"$out"
	while ((got < want)); do
		got=$((got + 1))
		notok "$(basename "$1"): result $got missing (exit status $rc)"
	done
	if ((rc != 0)); then
		echo "# $(basename "$1") exited with status $rc; its stderr:"
		diag "$out.err"
		fail=1
	fi
}

# rwcheck NAME DESC ARGS...: dlm_rw ($rw) ARGS must read back every word
# and swap pages in; its output in $tmp/NAME.out.
# shellcheck disable=SC2154 # $rw comes from the sourcing test
rwcheck() {
	local name=$1 desc=$2 rc
	shift 2
	timeout 300 "$rw" "$@" >"$tmp/$name.out" 2>&1
	rc=$?
	if ((rc == 0)) && grep -q '^bad=0 .*swapins=[1-9]' "$tmp/$name.out"; then
		ok "$desc: $(grep -o 'seconds=[0-9.]*' "$tmp/$name.out")"
	else
		notok "$desc (exit $rc)"
		diag "$tmp/$name.out"
	fi
}
