#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dlmd_idle_test.sh - --sched idle on a node whose every CPU is taken by
# other work.  dlmd and its memory server run under SCHED_IDLE, each with
# its starvation guard (daemon/schedguard.c) under SCHED_BATCH; busy loops
# at nice 0, two per CPU, leave the daemons' threads no CPU time of their
# own.  A program's DLM space must still read back intact, within a bounded
# time and without SIGBUS: the guard lifts the starved daemon to
# SCHED_BATCH (and logs it), and once the load is gone its threads are all
# back under SCHED_IDLE.  Then the same, the daemons, the program and two
# busy loops confined to one CPU while the others idle: the guards keep
# the daemons lifted while their CPU is busy (one lift each).  The lifts
# are prompt from Linux 6.6 on: before (CFS), the daemons warn and the
# checks beside busy loops are skipped.  Root and dlmem.ko (the VM).  TAP
# output.
set -uo pipefail
# shellcheck source=selftests/daemon/lib.sh
. "$(dirname "$0")/lib.sh"
vm_test_start
echo "1..7"

MS_EXTRA=(--sched idle)
start_memserver ms 64 wait && port=$MS_PORT ms=$MS_PID ||
	{ echo "Bail out! dlm-memserver did not start"; exit 1; }
printf '16\n64 127.0.0.1:%s\n' "$port" >"$tmp/memfile"
start_dlmd dlmd "$tmp/memfile" --sched idle && dlmd=$DLMD_PID ||
	{ echo "Bail out! dlmd did not register"; exit 1; }

pol=$(policies "$dlmd") pol1=$(policies "$ms")
# Before 6.6 both daemons warn that a lift may come late; from 6.6 neither.
cfs=$(cat "$tmp/dlmd.log" "$tmp/ms.log" | grep -c 'msg="--sched idle on a kernel before 6.6 (CFS)')
guard_prompt && want=0 || want=2
if [[ $pol == "5 threads="*" guard=3" && $pol1 == "5 threads="*" guard=3" ]] &&
   grep -q 'msg="starting" .* sched=idle ' "$tmp/dlmd.log" && ((cfs == want)); then
	ok "--sched idle: dlmd's and the server's threads SCHED_IDLE, each guard SCHED_BATCH ($pol / $pol1), CFS warnings $cfs on $(uname -r)"
else
	notok "--sched idle: dlmd $pol, server $pol1, CFS warnings $cfs (want $want)"
	diag "$tmp/dlmd.log"
fi
if ! guard_prompt; then
	for t in "16 MB beside busy loops" "bounded" "lifts logged" \
		"back under SCHED_IDLE" "confined to one CPU" "confined: one lift each"; do
		skip "$t: $GUARD_WHY"
	done
	kill -TERM "$dlmd" "$ms"
	wait "$dlmd" "$ms" 2>/dev/null
	exit "$fail"
fi

start_hogs
sleep 1

# 16 MB through a 1 MB budget, 64 KB pages: 240 or more swap-ins, each a
# request that dlmd and the memory server answer from SCHED_IDLE threads.
start=$(date +%s)
timeout 300 "$rw" -t 16 -b 1024 -p 64 >"$tmp/rw.out" 2>&1
rc=$?
secs=$(($(date +%s) - start))
if ((rc == 0)) && grep -q '^bad=0 .*swapins=[1-9]' "$tmp/rw.out"; then
	ok "16 MB through 1 MB beside ${#HOGS[@]} busy loops: every word intact, no SIGBUS ($(grep -o 'swapins=[0-9]*' "$tmp/rw.out"))"
else
	notok "16 MB beside busy loops (exit $rc)"
	diag "$tmp/rw.out"
	diag "$tmp/dlmd.log"
	diag "$tmp/ms.log"
fi
# Bounded: the kernel fails a request after request_timeout_ms (5 s),
# and without the guard a starved thread answers in seconds, not ms.
if ((secs < 120)); then
	ok "it took ${secs} s (bounded)"
else
	notok "it took ${secs} s"
fi
lifted=$(cat "$tmp/dlmd.log" "$tmp/ms.log" | grep -c 'msg="threads under SCHED_IDLE starved')
if ((lifted >= 1)); then
	ok "the guards lifted the starved daemons to SCHED_BATCH and said so: $(grep -ho 'tid=[0-9]* comm="[^"]*" ran_ms=[0-9]* window_ms=[0-9]*' "$tmp/dlmd.log" "$tmp/ms.log" | head -1)"
else
	notok "no starved thread was lifted"
	diag "$tmp/dlmd.log"
	diag "$tmp/ms.log"
fi

stop_hogs
# A lift lasts 1 to 8 s (longer while the load stays).
for ((i = 0; i < 100; i++)); do
	pol=$(policies "$dlmd") pol1=$(policies "$ms")
	[[ $pol == "5 threads="*" guard=3" && $pol1 == "5 threads="*" guard=3" ]] && break
	sleep 0.1
done
if [[ $pol == "5 threads="*" guard=3" && $pol1 == "5 threads="*" guard=3" ]]; then
	ok "the load gone, every thread is back under SCHED_IDLE ($pol / $pol1)"
else
	notok "after the load: dlmd $pol, server $pol1"
fi
kill -TERM "$dlmd" "$ms"
wait "$dlmd" "$ms" 2>/dev/null

# A job confined to one CPU (taskset, as a batch system's cpuset would),
# two busy loops on that CPU, the node's other CPUs idle.  The guards keep
# the daemons lifted while their own CPU stays busy: one lift each, not a
# put-back whenever the node has idle time, which left them seconds behind
# the loops under SCHED_IDLE, to be lifted again a moment later.
cpus=$(getconf _NPROCESSORS_ONLN)
if ((cpus < 2)); then
	skip "confined to one CPU beside busy loops: needs two CPUs"
	skip "confined: one lift per daemon: needs two CPUs"
	exit "$fail"
fi
last=$((cpus - 1))
MS_EXTRA=(--sched idle --log-level debug)	# every lift logged
start_memserver ms2 64 wait && port=$MS_PORT ms=$MS_PID ||
	{ echo "Bail out! dlm-memserver did not start"; exit 1; }
printf '16\n64 127.0.0.1:%s\n' "$port" >"$tmp/memfile2"
start_dlmd dlmd2 "$tmp/memfile2" --sched idle --log-level debug &&
	dlmd=$DLMD_PID || { echo "Bail out! dlmd did not register"; exit 1; }
taskset -acp "$last" "$dlmd" >/dev/null && taskset -acp "$last" "$ms" >/dev/null ||
	{ echo "Bail out! taskset"; exit 1; }
start_hogs "$last"
sleep 1
taskset -c "$last" timeout 300 "$rw" -t 16 -b 1024 -p 64 >"$tmp/rw2.out" 2>&1
rc=$?
stop_hogs
if ((rc == 0)) && grep -q '^bad=0 .*swapins=[1-9]' "$tmp/rw2.out"; then
	ok "confined to CPU $last beside ${#HOGS[@]} busy loops there: 16 MB intact, no SIGBUS"
else
	notok "confined to CPU $last beside busy loops (exit $rc)"
	diag "$tmp/rw2.out"
fi
l1=$(grep -c 'msg="threads under SCHED_IDLE starved' "$tmp/dlmd2.log")
l2=$(grep -c 'msg="threads under SCHED_IDLE starved' "$tmp/ms2.log")
if ((l1 + l2 >= 1 && l1 <= 1 && l2 <= 1)); then
	ok "confined: lifted while their CPU stayed busy, other CPUs idle (lifts: dlmd $l1, server $l2)"
else
	notok "confined: lifts dlmd $l1, server $l2 (want one each at most, one in all at least)"
	grep -h 'starved\|back under' "$tmp/dlmd2.log" "$tmp/ms2.log" | sed 's/^/# /'
fi
kill -TERM "$dlmd" "$ms"
wait "$dlmd" "$ms" 2>/dev/null
exit "$fail"
