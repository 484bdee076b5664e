#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# verbs_test.sh - dlmd --transport verbs against dlm-memserver --transport
# verbs over two soft-RoCE devices on a veth pair (rxe.sh), in a VM:
#
#   vm-images/vm-run -- selftests/verbs/verbs_test.sh
#
# Without an RDMA device both programs refuse with the fix named.  Then:
# the integrity runs of the TCP suite (dlm_rw writes and checks every word:
# 1 MB pages sequential, 64 KB pages random with two threads and CLOCK),
# /dev/dlmb0 on the same servers, the bytes crossing the veth pair, the memory server's CPU time while
# pages move (one-sided: only connection handling), a peer that is not a
# dlmd refused, a server whose locked-memory limit is too low refused with
# the limit named, a memory server killed under load and a link that goes
# down under load (a queue pair error): the program ends within a bound,
# dlmd lives on and logs the death once, a space on the surviving server
# works; SIGTERM disconnects cleanly; a server at its --max-clients
# rejects a queue pair with the reason on both sides.  TAP.
set -uo pipefail
# shellcheck source=selftests/daemon/lib.sh
. "$(dirname "$0")/../daemon/lib.sh"
# shellcheck source=selftests/verbs/rxe.sh
. "$(dirname "$0")/rxe.sh"

ko=${DLM_KO:-$top/kmod/dlmem.ko}
rw=${DLM_RW:-$build/selftests/remote/dlm_rw}
echo "TAP version 13"
if [[ $(id -u) != 0 || -z ${DLM_VM:-} ]]; then
	echo "1..0 # SKIP needs root in a VM (vm-images/vm-run): it adds soft-RoCE devices"
	exit 4
fi
need "$bin/dlmd" "$bin/dlm-memserver" "$bin/dlmctl" "$rw"
if [[ $("$bin/dlmd" --version) != *"transports: tcp verbs"* ]]; then
	echo "1..0 # SKIP dlmd built without rdma-core (make deps; make)"
	exit 4
fi
if [[ ! -d /sys/module/dlmem ]] && ! insmod "$ko"; then
	echo "Bail out! cannot load $ko"
	exit 1
fi
echo "1..25"
# The first dlmd waits 15 s for completions, so that lost packets can
# show as the queue pair's own error; the kernel waits longer still.  The second dlmd keeps the default I/O timeout.
params=/sys/module/dlmem/parameters
old_kt=$(cat $params/request_timeout_ms)
echo 20000 >$params/request_timeout_ms
trap 'echo "$old_kt" >$params/request_timeout_ms; rxe_teardown; cleanup' EXIT

# 1-2: no RDMA device yet.
rdma_devs=(/sys/class/infiniband/*)
if [[ -e ${rdma_devs[0]} ]]; then
	skip "dlm-memserver --transport verbs without an RDMA device: devices exist already"
	skip "dlmd --transport verbs without an RDMA device: devices exist already"
else
	"$bin/dlm-memserver" --transport verbs --listen '[::1]:7777' --size 8 \
		2>"$tmp/nodev-ms.err"
	rc=$?
	if ((rc == 1)) && grep -q 'no RDMA device.*modprobe rdma_rxe' "$tmp/nodev-ms.err"; then
		ok "dlm-memserver --transport verbs without an RDMA device: exit 1, names modprobe rdma_rxe"
	else
		notok "dlm-memserver without an RDMA device (exit $rc)"
		diag "$tmp/nodev-ms.err"
	fi
	printf '8\n8 [::1]:7777\n' >"$tmp/nodev.mf"
	"$bin/dlmd" --transport verbs -f "$tmp/nodev.mf" 2>"$tmp/nodev-d.err"
	rc=$?
	if ((rc == 1)) && grep -q 'no RDMA device.*rdma link add' "$tmp/nodev-d.err" &&
	   [[ $(cat /sys/class/misc/dlm/daemon) == 0 ]]; then
		ok "dlmd --transport verbs without an RDMA device: exit 1 before registering, names rdma link add"
	else
		notok "dlmd without an RDMA device (exit $rc)"
		diag "$tmp/nodev-d.err"
	fi
fi

# 3
if rxe_setup; then
	ok "soft-RoCE: rxe0 on va, rxe1 on vb (fe80::/64, MTU 9000)"
else
	notok "soft-RoCE devices on a veth pair"
	exit 1
fi

# The memory servers: dlm-memserver --transport verbs on vb's link-local
# address, any free port (start_memserver of ../daemon/lib.sh).
MS_LISTEN="[$LB%vb]:0"
MS_EXTRA=(--transport verbs)

# cpu_ms NAME: user+sys ms the server NAME logged last (SIGUSR1 or exit).
cpu_ms() {
	sed -n 's/.*cpu_user_ms=\([0-9]*\) cpu_sys_ms=\([0-9]*\).*/\1 \2/p' \
		"$tmp/$1.log" | tail -1 | awk '{ print $1 + $2 }'
}

# 4
if start_memserver ms1 32 && p1=$MS_PORT ms1=$MS_PID &&
   start_memserver ms2 64 wait && p2=$MS_PORT ms2=$MS_PID; then
	ok "two verbs memory servers (32 and 64 MB) on rxe1: $(grep -o 'msg="memory registered".*' "$tmp/ms2.log")"
else
	notok "two verbs memory servers"
	exit 1
fi

# 5
printf '# verbs\n32\n32 [%s%%va]:%s\n64 [%s%%va]:%s\n' "$LB" "$p1" "$LB" "$p2" \
	>"$tmp/memfile"
# start_dlmd LOG ARGS...: dlmd --transport verbs ARGS in the background
# (pid in $dlmd), logging to LOG; returns once it registered or ended.
start_dlmd() {
	local log=$1 i
	shift
	"$bin/dlmd" --transport verbs "$@" 2>"$log" &
	dlmd=$!
	pids+=("$dlmd")
	for ((i = 0; i < 300; i++)); do
		grep -q 'msg="registered"' "$log" && break
		kill -0 "$dlmd" 2>/dev/null || break
		sleep 0.1
	done
}
start_dlmd "$tmp/dlmd.log" -f "$tmp/memfile" --stats-file "$tmp/stats.json" \
	--stats-interval 1 --io-timeout 15
if grep -q 'msg="registered".*alive_servers=2' "$tmp/dlmd.log" &&
   [[ $(grep -c 'msg="verbs connection".*device=rxe0' "$tmp/dlmd.log") == 2 ]]; then
	ok "dlmd --transport verbs registered, both servers connected through rxe0"
else
	notok "dlmd --transport verbs registered"
	diag "$tmp/dlmd.log"
	exit 1
fi

# 6-8
kill -USR1 "$ms1" "$ms2"
sleep 0.5
cpu0=$(($(cpu_ms ms1) + $(cpu_ms ms2)))
rx0=$(rxe_rx_bytes)
rwcheck seq "24 MB space, 2 MB budget, 1 MB pages over verbs: every word read back" \
	-t 24 -b 2048 -p 1024
rwcheck rand "16 MB space, 64 KB pages, random order, 2 threads, clock, over verbs" \
	-t 16 -b 1024 -p 64 -a random -j 2 -P clock
rx=$(($(rxe_rx_bytes) - rx0))
if ((rx >= 24 << 20)); then
	ok "the pages crossed the veth pair: $((rx >> 20)) MB received on va"
else
	notok "only $rx bytes received on va"
fi

# 9: one-sided: the servers' CPU time does not grow with the pages.
kill -USR1 "$ms1" "$ms2"
sleep 0.5
cpu=$(($(cpu_ms ms1) + $(cpu_ms ms2) - cpu0))
swaps=$(grep -ho 'swapins=[0-9]*' "$tmp/seq.out" "$tmp/rand.out" |
	awk -F= '{ s += $2 } END { print s + 0 }')
if ((swaps > 100 && cpu * 10 < swaps)); then
	ok "memory servers' CPU while $swaps pages were swapped in: ${cpu} ms (< 0.1 ms per page)"
else
	notok "memory servers' CPU: $cpu ms for $swaps swap-ins"
fi

# 10: the same memory as a block device, over verbs.
head -c $((16 << 20)) /dev/urandom >"$tmp/blk.in"
if out=$("$bin/dlmctl" blk-add 16M 2>&1) && [[ -b /dev/dlmb0 ]] &&
   dd if="$tmp/blk.in" of=/dev/dlmb0 bs=1M oflag=direct status=none &&
   dd if=/dev/dlmb0 of="$tmp/blk.out" bs=1M iflag=direct status=none &&
   cmp -s "$tmp/blk.in" "$tmp/blk.out" && "$bin/dlmctl" blk-del 0; then
	ok "/dev/dlmb0 over verbs: 16 MB written and read back (O_DIRECT) byte for byte"
else
	notok "/dev/dlmb0 over verbs: $out"
	"$bin/dlmctl" blk-del 0 2>/dev/null
fi

# 11: a peer that is not a dlmd.
if command -v rping >/dev/null; then
	timeout 20 rping -c -a "$LB%va" -p "$p1" -C 1 >"$tmp/rping.out" 2>&1
	sleep 0.3
	if grep -q 'refused a connection: not a dlmd' "$tmp/ms1.log" &&
	   kill -0 "$ms1"; then
		ok "a connection without the dlmd hello (rping) is refused; the server serves on"
	else
		notok "rping against the memory server"
		diag "$tmp/ms1.log"
	fi
else
	skip "rping (rdmacm-utils) missing"
fi

# 12: the locked-memory limit of an unprivileged server.
setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
	prlimit --memlock=1048576 -- "$bin/dlm-memserver" --transport verbs \
	--listen "[$LB%vb]:0" --size 64 2>"$tmp/memlock.err"
rc=$?
if ((rc == 1)) && grep -q 'cannot register 64 MB.*locked-memory limit' "$tmp/memlock.err"; then
	ok "an unprivileged server over its locked-memory limit: exit 1, names ulimit -l"
else
	notok "memlock limit (exit $rc)"
	diag "$tmp/memlock.err"
fi

# 13-15: memory server 1 killed under load.
deadline_run() {	# deadline_run NAME SECONDS ARGS...: dlm_rw in the background
	local name=$1 t=$2
	shift 2
	timeout "$t" "$rw" "$@" >"$tmp/$name.out" 2>&1 &
	job=$!
}
deadline_run kill 120 -t 48 -b 2048 -p 256 -r 20
sleep 3
kill -KILL "$ms1"
t0=$SECONDS
wait "$job"
rc=$?
if ((rc != 124 && rc != 0)) && kill -0 "$dlmd" 2>/dev/null; then
	ok "memory server 1 killed under load: dlm_rw ended in $((SECONDS - t0)) s (exit $rc), dlmd alive"
else
	notok "memory server 1 killed under load: exit $rc"
	diag "$tmp/kill.out"
fi
deaths=$(grep -c 'msg="memory server dead.* rank=1 ' "$tmp/dlmd.log")
if ((deaths == 1)) && grep -q 'rank=1 .*disconnected' "$tmp/dlmd.log"; then
	ok "its death logged once: $(grep -o 'rank=1 .*why="[^"]*"' "$tmp/dlmd.log" | head -1)"
else
	notok "its death logged $deaths times"
	diag "$tmp/dlmd.log"
fi
rwcheck after "a 40 MB space on the surviving server works" -t 40 -b 2048 -p 1024

# 16-18: the link loses every packet under load (netem): the device fails
# the queue pair (6.12's rxe at once) or keeps retrying (6.1's rxe) until
# the I/O timeout (15 s here) gives up on it.
deadline_run loss 120 -t 40 -b 2048 -p 256 -r 50
sleep 3
tc qdisc add dev va root netem loss 100% 2>"$tmp/tc.err" ||
	echo "# tc netem: $(cat "$tmp/tc.err")"
t0=$SECONDS
wait "$job"
rc=$?
tc qdisc del dev va root 2>/dev/null
if ((rc != 124 && rc != 0)) && kill -0 "$dlmd" 2>/dev/null; then
	ok "every packet lost under load: dlm_rw ended in $((SECONDS - t0)) s (exit $rc), dlmd alive"
else
	notok "every packet lost under load: exit $rc"
	diag "$tmp/loss.out"
fi
if grep -q 'msg="memory server dead.* rank=2 .*why="\(RDMA \(READ\|WRITE\) failed\|no completion within the I/O timeout (15000 ms)\)' "$tmp/dlmd.log"; then
	ok "server 2 marked dead: $(grep -o 'rank=2 .*why="[^"]*"' "$tmp/dlmd.log" | head -1)"
else
	notok "server 2 not marked dead by the lost packets"
	diag "$tmp/dlmd.log"
fi
rw_out=$(timeout 60 "$rw" -t 8 -b 1024 -p 1024 2>&1)
rc=$?
if ((rc == 2)) && grep -q 'No space left' <<<"$rw_out"; then
	ok "with both servers dead a remote space is refused (ENOSPC), no hang"
else
	notok "no server left: exit $rc"
	sed 's/^/# /' <<<"$rw_out"
fi

# 19: stats, then 20: SIGTERM.
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["bytes_in"] >= 24 << 20 else 1)' \
	"$tmp/stats.json" 2>"$tmp/json.err"; then
	ok "the stats file counts the fetched bytes"
else
	notok "stats file"
	diag "$tmp/json.err"
	diag "$tmp/stats.json"
fi
kill -TERM "$dlmd"
wait "$dlmd"
rc=$?
if ((rc == 0)) && [[ $(cat /sys/class/misc/dlm/daemon) == 0 ]]; then
	ok "SIGTERM: dlmd unregisters and exits 0"
else
	notok "SIGTERM: exit $rc"
	diag "$tmp/dlmd.log"
fi
echo "$old_kt" >$params/request_timeout_ms

# 21-23: a dlmd with the default I/O timeout (half the kernel's) on server
# 2 alone; the link goes down: dead after the I/O timeout (6.1: no
# completions) or at once (6.12: the port goes down and the device fails
# the queue pair), well before the kernel gives up on dlmd.
printf '# verbs, server 2\n32\n64 [%s%%va]:%s\n' "$LB" "$p2" >"$tmp/memfile2"
start_dlmd "$tmp/dlmd2.log" -f "$tmp/memfile2"
if grep -q 'msg="registered".*alive_servers=1' "$tmp/dlmd2.log"; then
	rwcheck again "a new dlmd on the surviving server after the packets flow again: 24 MB, every word back" \
		-t 24 -b 2048 -p 1024
else
	notok "a new dlmd on the surviving server"
	diag "$tmp/dlmd2.log"
fi
deadline_run link2 120 -t 40 -b 2048 -p 256 -r 50
sleep 3
ip link set vb down
t0=$SECONDS
wait "$job"
rc=$?
ip link set vb up
if ((rc != 124 && rc != 0)) && kill -0 "$dlmd" 2>/dev/null &&
   grep -q 'msg="memory server dead.* rank=1 .*why="\(no completion within the I/O timeout\|RDMA\)' "$tmp/dlmd2.log"; then
	ok "link down under load: dlm_rw ended in $((SECONDS - t0)) s (exit $rc), $(grep -o 'why="[^"]*"' "$tmp/dlmd2.log" | head -1)"
else
	notok "link down under load: exit $rc"
	diag "$tmp/link2.out"
	diag "$tmp/dlmd2.log"
fi
kill -TERM "$dlmd"
wait "$dlmd"
rc=$?
((rc == 0)) && ok "SIGTERM: the second dlmd exits 0" ||
	notok "SIGTERM: the second dlmd: exit $rc"

# 24: --max-clients 1 over verbs: a registered dlmd holds the server's
# one queue pair; a second dlmd (which connects before it registers, and
# is then refused by the kernel) is rejected (VERBS_E_BUSY) with the
# reason on both sides; the first serves on.
MS_EXTRA=(--transport verbs --max-clients 1)
if start_memserver ms3 16 wait && p3=$MS_PORT ms3=$MS_PID; then
	printf '# verbs\n8\n16 [%s%%va]:%s\n' "$LB" "$p3" >"$tmp/memfile3"
	start_dlmd "$tmp/dlmd3.log" -f "$tmp/memfile3"
	timeout 60 "$bin/dlmd" --transport verbs -f "$tmp/memfile3" 2>"$tmp/dlmd4.log"
	out=$(timeout 120 "$rw" -t 12 -b 4096 -p 1024 2>&1)
	kill -TERM "$dlmd"
	wait "$dlmd"
	kill -TERM "$ms3"
	wait "$ms3"
	if grep -q 'refused a connection: as many clients as --max-clients.*max_clients=1' "$tmp/ms3.log" &&
	   grep -q 'as many clients as its --max-clients (raise its --max-clients' "$tmp/dlmd4.log" &&
	   [[ $out == *"bad=0 "* ]]; then
		ok "--max-clients 1 over verbs: the second queue pair rejected and logged on both sides, the first serves ($out)"
	else
		notok "--max-clients 1 over verbs ($out)"
		diag "$tmp/ms3.log"
		diag "$tmp/dlmd4.log"
	fi
else
	notok "--max-clients 1 over verbs: the server starts"
fi

# 25
kill -TERM "$ms2"
wait "$ms2"
rc=$?
if ((rc == 0)) && grep -q 'msg="exit".*cpu_user_ms=' "$tmp/ms2.log"; then
	ok "memory server 2 exits 0 on SIGTERM and logs its CPU time"
else
	notok "memory server 2 SIGTERM: exit $rc"
	diag "$tmp/ms2.log"
fi
exit $fail
