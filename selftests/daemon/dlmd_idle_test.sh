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
# back under SCHED_IDLE.  Root and dlmem.ko (the VM).  TAP output.
set -uo pipefail
# shellcheck source=selftests/daemon/lib.sh
. "$(dirname "$0")/lib.sh"
vm_test_start
echo "1..5"

MS_EXTRA=(--sched idle)
start_memserver ms 64 wait && port=$MS_PORT ms=$MS_PID ||
	{ echo "Bail out! dlm-memserver did not start"; exit 1; }
printf '16\n64 127.0.0.1:%s\n' "$port" >"$tmp/memfile"
start_dlmd dlmd "$tmp/memfile" --sched idle && dlmd=$DLMD_PID ||
	{ echo "Bail out! dlmd did not register"; exit 1; }

pol=$(policies "$dlmd") pol1=$(policies "$ms")
if [[ $pol == "5 threads="*" guard=3" && $pol1 == "5 threads="*" guard=3" ]] &&
   grep -q 'msg="starting" .* sched=idle ' "$tmp/dlmd.log"; then
	ok "--sched idle: dlmd's and the server's threads SCHED_IDLE, each guard SCHED_BATCH ($pol / $pol1)"
else
	notok "--sched idle: dlmd $pol, server $pol1"
	diag "$tmp/dlmd.log"
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
exit "$fail"
