#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# mpi_test.sh - dlmd as an MPI job (mpirun -np 3 dlmd -f MEMFILE: rank 0
# serves the kernel, ranks 1 and 2 are the memory servers), with Open MPI
# and with MPICH, in a VM:
#
#   vm-images/vm-run -- selftests/mpi/mpi_test.sh
#
# For each MPI: the thread level picks the protocol (multiple -> as1,
# funneled -> as2, single -> cs) and each protocol moves pages intact
# (dlm_rw writes and checks every word, 1 MB and 64 KB pages, two threads,
# random order), and so with the memory server ranks' other way to wait
# (--mpi-server-wait: auto sleeps here, where the job's 3 ranks are at
# least as many as the CPUs, and would poll on a node with more; each MPI
# runs the other too, with --sched idle, which every thread of the
# three ranks but their starvation guards must run under, and which
# beside two busy loops per CPU still moves pages, the guards lifting the
# starved ranks); a protocol the level does not allow, and a
# memfile that does not match the ranks, are refused with the fix named;
# SIGTERM to rank 0 ends the whole job cleanly; a memory server rank
# killed, or stopped, under load ends the job and the program within a
# bound (SIGBUS or EIO, never a hang), and the kernel is left with no
# daemon.  TAP.
set -uo pipefail
# shellcheck source=selftests/daemon/lib.sh
. "$(dirname "$0")/../daemon/lib.sh"
# shellcheck source=selftests/mpi/lib.sh
. "$(dirname "$0")/lib.sh"

ko=${DLM_KO:-$top/kmod/dlmem.ko}
rw=${DLM_RW:-$build/selftests/remote/dlm_rw}
daemon_file=/sys/class/misc/dlm/daemon
echo "TAP version 13"
if [[ $(id -u) != 0 ]]; then
	echo "1..0 # SKIP needs root and dlmem.ko (run it with vm-images/vm-run)"
	exit 4
fi
need "$bin/dlmd" "$rw"
impls=()
for m in openmpi mpich; do
	if [[ -x $bin/dlmd-$m ]] && command -v "mpirun.$m" >/dev/null; then
		impls+=("$m")
	else
		echo "# $m: dlmd-$m or mpirun.$m missing (make deps; make)"
	fi
done
if ((${#impls[@]} == 0)); then
	echo "1..0 # SKIP no MPI build of dlmd: run 'make deps' and 'make'"
	exit 4
fi
if [[ ! -d /sys/module/dlmem ]] && ! insmod "$ko"; then
	echo "Bail out! cannot load $ko"
	exit 1
fi
echo "1..$((20 * ${#impls[@]}))"
asan_timeouts
trap 'asan_timeouts_restore; cleanup' EXIT

# Open MPI refuses root without the flag and binds ranks to cores (three
# ranks on two vCPUs need --oversubscribe; dlmd's threads must not be
# bound to one core).  MPICH's hydra needs neither.
mpirun_cmd() {	# mpirun_cmd IMPL: the launcher and its options
	case $1 in
	openmpi) echo "mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none" ;;
	mpich) echo "mpirun.mpich" ;;
	esac
}

# start_job IMPL NAME MEMFILE DLMD-ARGS...: mpirun -np 3 dlmd in the
# background, log in $tmp/NAME.log; JOB is mpirun's pid, RANK0 dlmd's.
# 0 once rank 0 registered with the kernel, 1 if the job ended first.
start_job() {
	local impl=$1 name=$2 mf=$3
	shift 3
	# shellcheck disable=SC2046
	$(mpirun_cmd "$impl") -np 3 "$bin/dlmd" -f "$mf" "$@" \
		>"$tmp/$name.log" 2>&1 &
	JOB=$!
	pids+=("$JOB")
	RANK0=
	registered "$tmp/$name.log" "$JOB" || return 1
	RANK0=$(rank0_pid "$tmp/$name.log")
	[[ -n $RANK0 ]]
}

# wait_job SECONDS: wait for mpirun; JOB_RC its status, 1 on timeout.
wait_job() {
	local i
	for ((i = 0; i < $1 * 10; i++)); do
		if ! kill -0 "$JOB" 2>/dev/null; then
			wait "$JOB"
			JOB_RC=$?
			return 0
		fi
		sleep 0.1
	done
	pkill -KILL -P "$JOB" 2>/dev/null
	kill -KILL "$JOB" 2>/dev/null
	wait "$JOB" 2>/dev/null
	JOB_RC=timeout
	return 1
}

# cpus_of PID: the CPU lists its threads may run on, each once.
cpus_of() {
	cat /proc/"$1"/task/*/status 2>/dev/null |
		sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' | sort -u | tr '\n' ' '
}

# server_pid NAME RANK: the pid memory server RANK logged.
server_pid() {
	sed -n "s/.*prog=dlmd-rank$2 msg=\"serving\".* pid=\([0-9]*\).*/\1/p" \
		"$tmp/$1.log"
}

# proto_job IMPL NAME LEVEL PROTO: a job started with thread level LEVEL
# must log PROTO in force; then data through it.
proto_job() {
	local impl=$1 name=$2 level=$3 proto=$4
	if start_job "$impl" "$name" "$tmp/memfile" --mpi-thread-level "$level" &&
	   grep -q "thread_level_requested=$level .*protocol=$proto" "$tmp/$name.log"; then
		ok "$impl: thread level $level gives protocol $proto ($(grep -o 'thread_level_provided=[a-z]*' "$tmp/$name.log"))"
	else
		notok "$impl: thread level $level gives protocol $proto"
		diag "$tmp/$name.log"
		return 1
	fi
}

stop_job() {	# stop_job IMPL NAME: SIGTERM to rank 0 ends the job
	local impl=$1 name=$2
	kill -TERM "$RANK0" 2>/dev/null
	if wait_job 60 && [[ $JOB_RC == 0 ]] &&
	   grep -q 'msg="unregistered"' "$tmp/$name.log" &&
	   (($(grep -c 'msg="memory server rank exits"' "$tmp/$name.log") == 2)) &&
	   [[ $(cat $daemon_file) == 0 ]]; then
		ok "$impl: SIGTERM to rank 0: it unregisters, both server ranks exit, mpirun exits 0"
	else
		notok "$impl: SIGTERM to rank 0 (mpirun: $JOB_RC)"
		diag "$tmp/$name.log"
	fi
}

# fail_test IMPL NAME SIGNAL: signal memory server rank 1 under load; the
# program and the job must end in a bound, no daemon left in the kernel.
fail_test() {
	local impl=$1 name=$2 sig=$3 victim rc t0
	if ! start_job "$impl" "$name" "$tmp/memfile" --io-timeout 2; then
		notok "$impl: job for the $sig test did not start"
		diag "$tmp/$name.log"
		return
	fi
	timeout 120 "$rw" -t 48 -b 2048 -p 256 -r 20 >"$tmp/$name.out" 2>&1 &
	local job=$!
	sleep 3
	victim=$(server_pid "$name" 1)
	t0=$SECONDS
	kill "-$sig" "$victim"
	wait "$job"
	rc=$?
	wait_job 60
	kill -CONT "$victim" 2>/dev/null
	if ((rc != 0 && rc != 124)) && [[ $JOB_RC != timeout && $JOB_RC != 0 ]] &&
	   [[ $(cat $daemon_file) == 0 ]]; then
		ok "$impl: memory server rank $sig under load: program ended in $((SECONDS - t0)) s ($( ((rc > 128)) && echo "SIG$(kill -l $((rc - 128)))" || echo "exit $rc")), job ended ($JOB_RC), no daemon left"
	else
		notok "$impl: memory server rank $sig under load: program exit $rc, mpirun $JOB_RC, daemon $(cat $daemon_file)"
		diag "$tmp/$name.out"
		diag "$tmp/$name.log"
	fi
}

printf '# mpi_test: local MB, then one line per server rank\n32\n64\n64\n' \
	>"$tmp/memfile"
printf '32\n64\n' >"$tmp/memfile1"

for impl in "${impls[@]}"; do
	if start_job "$impl" "$impl-auto" "$tmp/memfile" &&
	   grep -q 'msg="memory server connected" rank=2' "$tmp/$impl-auto.log"; then
		ok "$impl: mpirun -np 3 dlmd: rank 0 registered, ranks 1 and 2 serve ($(grep -o 'protocol=[a-z0-9]*' "$tmp/$impl-auto.log"))"
	else
		notok "$impl: mpirun -np 3 dlmd"
		diag "$tmp/$impl-auto.log"
		continue
	fi
	# --cpu auto: every thread of rank 0 on the last CPU, the memory
	# server ranks as mpirun started them (all CPUs here).
	cpus=$(getconf _NPROCESSORS_ONLN)
	if ((cpus > 1)); then
		want0="$((cpus - 1)) " want1="0-$((cpus - 1)) " wantlog=$((cpus - 1))
	else
		want0="0 " want1="0 " wantlog=any
	fi
	c0=$(cpus_of "$RANK0") c1=$(cpus_of "$(server_pid "$impl-auto" 1)")
	if [[ $c0 == "$want0" && $c1 == "$want1" ]] &&
	   grep -q "msg=\"starting\" .* cpu=$wantlog pid=" "$tmp/$impl-auto.log"; then
		ok "$impl --cpu auto: rank 0's threads on CPU ${want0}only, rank 1's on ${want1}(as started), the log says cpu=$wantlog"
	else
		notok "$impl --cpu auto: rank 0 on '$c0', rank 1 on '$c1' (want '$want0' and '$want1', cpu=$wantlog logged)"
		diag "$tmp/$impl-auto.log"
	fi
	rwcheck "$impl-seq" "$impl auto: 48 MB, 4 MB budget, 1 MB pages, every word back" \
		-t 48 -b 4096 -p 1024
	rwcheck "$impl-rand" "$impl auto: 16 MB, 64 KB pages, random, 2 threads, clock" \
		-t 16 -b 1024 -p 64 -a random -j 2 -P clock
	stop_job "$impl" "$impl-auto"
	want=sleep other=poll
	((cpus > 3)) && want=poll other=sleep
	# Rank 0's "MPI job" line and each server rank's "serving" line.
	if (($(grep -c "server_wait=$want node_ranks=3 node_cpus=$cpus\b" "$tmp/$impl-auto.log") == 3)); then
		ok "$impl: memory server ranks $want by default, each rank's log says (--mpi-server-wait auto: 3 ranks, $cpus CPUs)"
	else
		notok "$impl: memory server ranks $want by default"
		diag "$tmp/$impl-auto.log"
	fi
	if start_job "$impl" "$impl-$other" "$tmp/memfile" --mpi-server-wait "$other" \
		--sched idle &&
	   grep -q "server_wait=$other" "$tmp/$impl-$other.log"; then
		# Every thread of every rank, MPI's own included: SCHED_IDLE (5),
		# but each rank's starvation guard, SCHED_BATCH (3).
		pols="$(policies "$RANK0") / $(policies "$(server_pid "$impl-$other" 1)") / $(policies "$(server_pid "$impl-$other" 2)")"
		if [[ $pols == "5 threads="*" guard=3 / 5 threads="*" guard=3 / 5 threads="*" guard=3" ]] &&
		   grep -q 'msg="starting" .* sched=idle ' "$tmp/$impl-$other.log"; then
			ok "$impl --sched idle: every thread of the three ranks runs SCHED_IDLE, each rank's guard SCHED_BATCH ($pols)"
		else
			notok "$impl --sched idle: policies $pols"
			diag "$tmp/$impl-$other.log"
		fi
		# --cpu auto leaves a SCHED_IDLE rank 0 where it started.
		c0=$(cpus_of "$RANK0")
		if [[ $c0 == "$want1" ]] && grep -q 'msg="starting" .* cpu=any pid=' "$tmp/$impl-$other.log"; then
			ok "$impl --sched idle: --cpu auto leaves rank 0 on ${want1}(cpu=any logged)"
		else
			notok "$impl --sched idle: rank 0 on '$c0', want '$want1' and cpu=any logged"
		fi
		rwcheck "$impl-$other-rw" "$impl --mpi-server-wait $other --sched idle: 16 MB, 64 KB pages, random, 2 threads" \
			-t 16 -b 1024 -p 64 -a random -j 2
		# Two busy loops per CPU at nice 0 starve the ranks under
		# SCHED_IDLE: their guards must lift them, and pages move.
		if ! guard_prompt; then
			skip "$impl --sched idle beside busy loops: $GUARD_WHY"
			skip "$impl --sched idle beside busy loops, lifts: $GUARD_WHY"
		else
			start_hogs
			rwcheck "$impl-$other-hogs" "$impl --sched idle beside ${#HOGS[@]} busy loops: 16 MB, 64 KB pages" \
				-t 16 -b 1024 -p 64
			stop_hogs
			lifted=$(grep -o 'prog=dlmd[-a-z0-9]* msg="threads under SCHED_IDLE starved' \
				"$tmp/$impl-$other.log" | cut -d' ' -f1 | sort -u | tr '\n' ' ')
			# Polling ranks may take 2% of a CPU even so (seen under
			# MPICH on 6.12): then no guard had anything to lift.
			if [[ -n $lifted ]]; then
				ok "$impl --sched idle beside busy loops: the starvation guards lifted the ranks ($lifted)"
			else
				skip "$impl --sched idle beside busy loops: no rank starved, no guard lifted one"
			fi
		fi
	else
		notok "$impl --sched idle: no job"
		notok "$impl --mpi-server-wait $other: no job to move data through"
		notok "$impl --sched idle beside busy loops: no job"
		notok "$impl --sched idle beside busy loops: no job to lift"
		diag "$tmp/$impl-$other.log"
	fi
	kill -TERM "$RANK0" 2>/dev/null
	wait_job 60

	for lp in funneled:as2 single:cs; do
		if proto_job "$impl" "$impl-${lp%:*}" "${lp%:*}" "${lp#*:}"; then
			rwcheck "$impl-${lp%:*}-rw" "$impl ${lp#*:}: 16 MB, 64 KB pages, random, 2 threads" \
				-t 16 -b 1024 -p 64 -a random -j 2
		else
			notok "$impl ${lp#*:}: no job to move data through"
		fi
		kill -TERM "$RANK0" 2>/dev/null
		wait_job 60
	done

	# shellcheck disable=SC2046
	$(mpirun_cmd "$impl") -np 3 "$bin/dlmd" -f "$tmp/memfile" \
		--mpi-protocol as1 --mpi-thread-level funneled >"$tmp/$impl-bad.log" 2>&1
	rc=$?
	if ((rc != 0)) && grep -q 'as1 needs MPI_THREAD_SERIALIZED .*use --mpi-protocol auto' "$tmp/$impl-bad.log" &&
	   [[ $(cat $daemon_file) == 0 ]]; then
		ok "$impl: as1 at thread level funneled refused, the fix named (mpirun exit $rc)"
	else
		notok "$impl: as1 at thread level funneled (exit $rc)"
		diag "$tmp/$impl-bad.log"
	fi

	# shellcheck disable=SC2046
	timeout 120 $(mpirun_cmd "$impl") -np 3 "$bin/dlmd" -f "$tmp/memfile1" \
		>"$tmp/$impl-ranks.log" 2>&1
	rc=$?
	if ((rc != 0 && rc != 124)) && grep -q 'lists 1 memory server but mpirun started 3 ranks .*run mpirun -np 2' "$tmp/$impl-ranks.log"; then
		ok "$impl: memfile with 1 server for 3 ranks refused, mpirun -np 2 named (exit $rc)"
	else
		notok "$impl: memfile/rank mismatch (exit $rc)"
		diag "$tmp/$impl-ranks.log"
	fi

	fail_test "$impl" "$impl-kill" KILL
	fail_test "$impl" "$impl-stop" STOP
	if [[ $impl == "${impls[0]}" ]]; then
		"$bin/dlmd" -f "$tmp/memfile" --mpi-protocol as2 >"$tmp/nompi.log" 2>&1
		rc=$?
		if ((rc == 2)) && grep -q 'need an MPI launch: mpirun -np N dlmd' "$tmp/nompi.log"; then
			ok "dlmd --mpi-protocol without mpirun: usage error naming mpirun"
		else
			notok "dlmd --mpi-protocol without mpirun (exit $rc)"
			diag "$tmp/nompi.log"
		fi
	else
		if grep -q "MPICH" "$tmp/$impl-auto.log" && grep -q "Open MPI" "$tmp/${impls[0]}-auto.log"; then
			ok "the two jobs ran on two MPI libraries (Open MPI, MPICH)"
		else
			notok "the two jobs ran on two MPI libraries"
		fi
	fi
done
exit $fail
