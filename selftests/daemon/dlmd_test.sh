#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dlmd_test.sh - dlmd and dlm-memserver with the real dlmem.ko, as
# root, in a VM (not part of check-native: it needs the module):
#
#   vm-images/vm-run -- selftests/daemon/dlmd_test.sh
#
# Two memory servers on 127.0.0.1, dlmd, and dlm_rw (selftests/remote)
# writing and checking remote spaces: data intact at two page sizes with
# two threads, a second dlmd refused, ENOSPC, a memory server killed under
# load (no hang; dlmd lives on and logs it once), a space that fits the
# surviving server, no frame of dlmd's ever looks held by another kernel
# user (pin_check), SIGUSR1 and the stats file, SIGTERM unregisters, the
# module unloads; dlmd's and the servers' threads run SCHED_BATCH
# (--sched).  DLM_KO and DLM_RW override the module and dlm_rw.  TAP.
set -uo pipefail
# shellcheck source=selftests/daemon/lib.sh
. "$(dirname "$0")/lib.sh"

ko=${DLM_KO:-$top/kmod/dlmem.ko}
rw=${DLM_RW:-$build/selftests/remote/dlm_rw}
echo "TAP version 13"
if [[ $(id -u) != 0 ]]; then
	echo "1..0 # SKIP needs root and dlmem.ko (run it with vm-images/vm-run)"
	exit 4
fi
need "$bin/dlmd" "$bin/dlm-memserver" "$rw"

loaded=0
if [[ ! -d /sys/module/dlmem ]]; then
	if insmod "$ko" 2>"$tmp/insmod.err"; then
		loaded=1
	elif [[ -z ${DLM_VM:-} ]]; then
		echo "1..0 # SKIP cannot load $ko here: run it with vm-images/vm-run"
		exit 4
	else
		echo "Bail out! cannot load $ko: $(cat "$tmp/insmod.err")"
		exit 1
	fi
fi
echo "1..16"
ok "dlmem.ko loaded"
params=/sys/module/dlmem/parameters
held_msgs() { dmesg | grep -c "held by another kernel user\|still referenced by another"; }
held_skips=/sys/class/misc/dlm/stats/held_skips
held0=$(cat $held_skips) msgs0=$(held_msgs)
old_pin=$(cat $params/pin_check)
echo Y >$params/pin_check
# shellcheck disable=SC2317	# run by the trap
restore_pin() { [[ ! -w $params/pin_check ]] || echo "$old_pin" >"$params/pin_check"; }
trap 'restore_pin; cleanup' EXIT

# rw NAME ARGS...: dlm_rw with a bound; its output in $tmp/NAME.out.
rw() {
	local name=$1
	shift
	timeout 300 "$rw" "$@" >"$tmp/$name.out" 2>&1
}

start_memserver ms1 32 && p1=$MS_PORT ms1=$MS_PID &&
	start_memserver ms2 64 wait && p2=$MS_PORT ms2=$MS_PID &&
	ok "two memory servers (32 and 64 MB)" ||
	{ notok "two memory servers"; exit 1; }

printf '# vm-integration\n32\n32 127.0.0.1:%s\n64 127.0.0.1:%s\n' "$p1" "$p2" \
	>"$tmp/memfile"
"$bin/dlmd" -f "$tmp/memfile" --stats-file "$tmp/stats.json" \
	--stats-interval 1 2>"$tmp/dlmd.log" &
dlmd=$!
pids+=("$dlmd")
for ((i = 0; i < 100; i++)); do
	grep -q 'msg="registered"' "$tmp/dlmd.log" && break
	kill -0 "$dlmd" 2>/dev/null || break
	sleep 0.1
done
if grep -q 'msg="registered"' "$tmp/dlmd.log"; then
	ok "dlmd registered with the kernel"
else
	notok "dlmd registered with the kernel"
	diag "$tmp/dlmd.log"
	exit 1
fi

# --sched batch by default: every thread (signals, netlink, one or more per
# server connection), and the memory servers' connection threads.
pol=$(policies "$dlmd") pol1=$(policies "$ms1") pol2=$(policies "$ms2")
if [[ $pol == "3 threads="* ]] && ((${pol#*threads=} >= 4)) &&
   [[ $pol1 == "3 threads="[2-9]* && $pol2 == "3 threads="[2-9]* ]] &&
   grep -q 'msg="starting" .* sched=batch ' "$tmp/dlmd.log"; then
	ok "dlmd's and the memory servers' threads run SCHED_BATCH"
else
	notok "SCHED_BATCH threads: dlmd $pol, servers $pol1 / $pol2"
fi

"$bin/dlmd" -f "$tmp/memfile" 2>"$tmp/second.err"
rc=$?
if ((rc == 1)) && grep -q "another dlmd is registered" "$tmp/second.err"; then
	ok "a second dlmd is refused (EBUSY), exit 1"
else
	notok "a second dlmd is refused (exit $rc)"
	diag "$tmp/second.err"
fi

# Thread names (daemon/README.md): the netlink thread, a sender and a
# receiver per lane (write, two reads) per server, one thread per
# connection in each memory server.
names() { cat /proc/"$1"/task/*/comm 2>/dev/null | sort | tr '\n' ' '; }
want="dlmd dlmd-netlink tcp0-r0-rx tcp0-r0-tx tcp0-r1-rx tcp0-r1-tx tcp0-w-rx tcp0-w-tx tcp1-r0-rx tcp1-r0-tx tcp1-r1-rx tcp1-r1-tx tcp1-w-rx tcp1-w-tx "
got=$(names "$dlmd")
msrv=$(names "$ms1")
if [[ $got == "$want" && $msrv == "dlm-memserver msrv-client msrv-client msrv-client " ]]; then
	ok "threads named for ps -L and perf (dlmd-netlink, tcpS-LANE-tx|rx, msrv-client)"
else
	notok "thread names: dlmd '$got', memory server 1 '$msrv'"
fi

# check NAME DESC: dlm_rw NAME exited 0 with bad=0 and pages swapped in.
check() {
	if [[ $rc == 0 ]] && grep -q '^bad=0 .*swapins=[1-9]' "$tmp/$1.out"; then
		ok "$2"
	else
		notok "$2 (exit $rc)"
		diag "$tmp/$1.out"
	fi
}
rw seq -t 24 -b 2048 -p 1024
rc=$?
check seq "24 MB space, 2 MB budget, 1 MB pages: every word read back"
rw rand -t 16 -b 1024 -p 64 -a random -j 2 -P clock
rc=$?
check rand "16 MB space, 64 KB pages, random order, 2 threads, clock"

rw nospc -t 512 -b 2048 -p 1024
rc=$?
if ((rc == 2)) && grep -q "No space left" "$tmp/nospc.out"; then
	ok "a space larger than the servers: DLM_IOC_SETUP fails with ENOSPC"
else
	notok "a space larger than the servers: exit $rc"
	diag "$tmp/nospc.out"
fi

rw kill -t 48 -b 2048 -p 256 -r 20 &
job=$!
sleep 2
kill -KILL "$ms1"
wait "$job"
rc=$?
if ((rc != 124)) && kill -0 "$dlmd" 2>/dev/null; then
	ok "memory server 1 killed under load: dlm_rw ended (exit $rc), dlmd alive"
else
	notok "memory server 1 killed under load: exit $rc"
	diag "$tmp/kill.out"
fi
deaths=$(grep -c 'msg="memory server dead.* rank=1 ' "$tmp/dlmd.log")
if ((deaths == 1)); then
	ok "its death logged once"
else
	notok "its death logged $deaths times"
fi

rw after -t 40 -b 2048 -p 1024
rc=$?
check after "a 40 MB space on the surviving server works"

# Nothing here pins a page: a frame that looked held was dlmd's own
# reference outliving its request, which the kernel cannot tell from a
# program's (a STORE's frames lent to the socket, as dlmd once did, stay
# referenced after the reply and in a dead connection: #12 then failed).
held=$(($(cat $held_skips) - held0))
msgs=$(($(held_msgs) - msgs0))
if ((held == 0 && msgs == 0)); then
	ok "no frame looked held by another kernel user (pin_check=Y, a server killed under load)"
else
	notok "frames looked held: held_skips +$held, $msgs messages"
	dmesg | grep "held by another\|still referenced" | tail -3 | diag /dev/stdin
fi

kill -USR1 "$dlmd"
sleep 1.5
if grep -q 'msg="stats" op=fetch requests=[1-9]' "$tmp/dlmd.log" &&
   grep -q '"alive": false' "$tmp/stats.json" &&
   { ! command -v python3 >/dev/null ||
     python3 -m json.tool "$tmp/stats.json" >/dev/null; }; then
	ok "SIGUSR1 logs the stats; the stats file is JSON showing server 1 dead"
else
	notok "SIGUSR1 stats and stats file"
	diag "$tmp/stats.json"
fi

kill -TERM "$dlmd"
wait "$dlmd"
rc=$?
if ((rc == 0)) && grep -q 'msg="unregistered"' "$tmp/dlmd.log"; then
	ok "SIGTERM: dlmd unregisters and exits 0"
else
	notok "SIGTERM: exit $rc"
	grep -v level=debug "$tmp/dlmd.log" | diag /dev/stdin
fi
kill -TERM "$ms2"
wait "$ms2"

if ((loaded)); then
	if rmmod dlmem 2>"$tmp/rmmod.err"; then
		ok "dlmem.ko unloads"
	else
		notok "dlmem.ko unloads: $(cat "$tmp/rmmod.err")"
	fi
else
	skip "dlmem.ko unloads: it was loaded before this test"
fi
if ((fail)); then
	echo "# dlmd log:"
	diag "$tmp/dlmd.log"
fi
exit "$fail"
