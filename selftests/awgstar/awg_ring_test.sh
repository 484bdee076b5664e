#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# awg_ring_test.sh - AWG-STAR rings of 2 and 3 boards in one VM (dlmem.ko
# reloaded with awg_boards=3), one awgstard per board, over TCP and over
# RDMA (soft-RoCE): replicas identical on every node after random
# concurrent overlapping writes (DMA pokes, pointer stores, DMA blocks) and
# every node's own data where it wrote it; one node's writes seen in order
# by another; events to one node and barriers through events; CRC errors
# (injected) retried without harm; the timing model's rotation within 10%
# of 500 N + 5 L (+ line time) for 2 and 3 nodes, in the first of up to
# three tries (skipped when DLM_TIMEOUT_SCALE > 1, as on the debug
# kernel); a node killed mid-run: the others notice, drop it, keep
# identical replicas and refuse events
# to it (EHOSTUNREACH); libawgstar's awg_barrier() retried after
# ETIMEDOUT while one node's program or daemon is stopped for 2 s, the
# nodes kept in step; the hub refusing a peer that sends no hello and
# dropping nodes that reply with an impossible length or a token its
# board refuses.  At the end the module is reloaded as
# run-in-vm.sh left it (one board).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=selftests/awgstar/lib.sh
source "$here/lib.sh"
PROG=${DLM_BIN:-$AWG_TOP/build}/selftests/awgstar/awg_ring_prog

n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $*"; }
skip() { n=$((n + 1)); echo "ok $n # SKIP $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else notok "$what"; fi; }

echo "TAP version 13"
if [[ $(id -u) != 0 || ! -x $PROG || ! -x $AWG_BIN/awgstard ]]; then
	echo "1..0 # SKIP needs root (in the VM) and make"
	exit 0
fi

restore() {
	awg_ring_stop
	[[ $(type -t rxe_teardown) == function ]] && rxe_teardown
	awg_reload 1 >/dev/null 2>&1
	rm -rf "$AWG_LOG"
}
trap restore EXIT

if ! awg_reload 3; then
	echo "1..0 # SKIP cannot reload dlmem.ko with awg_boards=3"
	exit 0
fi

AREA=$((1 << 20))	# shared, overlapping writes
ALEN=$((1 << 20))
PRIV=$((8 << 20))	# node i's own 64 KiB at PRIV + i * 1 MiB

# same_sums NODES...: every listed node has the same hash of the area.
same_sums() {
	local i s first=
	for i in "$@"; do
		s=$("$PROG" sum "$(awg_dev "$i")" "$AREA" $((PRIV + 4 * 1048576 - AREA)))
		echo "#   node $i: $s"
		[[ -z $first ]] && first=$s
		[[ $s == "$first" ]] || return 1
	done
}

# mix_all NODES OPS SEEDBASE: a writer per node at once; each node's pattern checked on every node.
mix_all() {
	local nodes=$1 ops=$2 base=$3 i j pids=() rc=0
	for ((i = 0; i < nodes; i++)); do
		"$PROG" mix "$(awg_dev "$i")" $((base + i)) "$ops" "$AREA" "$ALEN" \
			$((PRIV + i * 1048576)) &
		pids+=($!)
	done
	for i in "${pids[@]}"; do
		wait "$i" || rc=1
	done
	((rc == 0)) || { echo "# a writer failed"; return 1; }
	for ((i = 0; i < nodes; i++)); do
		for ((j = 0; j < nodes; j++)); do
			"$PROG" check "$(awg_dev "$i")" $((base + j)) $((PRIV + j * 1048576)) || return 1
		done
	done
	same_sums $(seq 0 $((nodes - 1))) && return 0
	for ((i = 0; i < nodes; i++)); do
		echo "#   node $i: $("$AWG_BIN/awgstard" --show --device "$(awg_dev "$i")" | tr '\n' ' ')"
	done
	return 1
}

# Every scenario starts from fresh, identical (zero) replicas: a node that
# left a ring does not get its replica brought up to date when it rejoins.
fresh() {
	awg_reload 3 || { echo "# cannot reload dlmem.ko"; return 1; }
}

ring_case() {	# ring_case NODES TRANSPORT
	local nodes=$1 tr=$2 out s i
	fresh
	if ! awg_ring_start "$nodes" "$tr"; then
		notok "ring of $nodes over $tr forms"
		return
	fi
	ok "ring of $nodes over $tr forms (live_mask $(awg_show 0 live_mask))"
	check "$tr, $nodes nodes: concurrent overlapping writes from every node: every node's data everywhere, replicas identical" \
		mix_all "$nodes" 1500 $((RANDOM * 10))

	if ((nodes == 3)); then
		"$PROG" order "$(awg_dev 2)" reader 1500 $((2 << 20)) &
		local rd=$!
		"$PROG" order "$(awg_dev 0)" writer 1500 $((2 << 20))
		check "$tr: node 2 sees node 0's 1500 writes to one word in order, up to the last" wait "$rd"

		out=$("$PROG" event "$(awg_dev 0)" wait 4 0)
		"$PROG" event "$(awg_dev 1)" send 2 4 77
		s=$("$PROG" event "$(awg_dev 2)" wait 4 10000)
		out2=$("$PROG" event "$(awg_dev 0)" wait 4 300)
		check "$tr: an event from node 1 to node 2 arrives with its data, not at node 0 ($s; node 0: $out2)" \
			test "$s" == "from 1 data 77" -a "${out2%% *}" == none -a "${out%% *}" == none

		local pids=() rc=0
		for ((i = 0; i < nodes; i++)); do
			"$PROG" barrier "$(awg_dev "$i")" 30 &
			pids+=($!)
		done
		for i in "${pids[@]}"; do wait "$i" || rc=1; done
		check "$tr: 30 barriers through board events: after each, every node's slot shows exactly the round" test $rc = 0
	fi
	awg_ring_stop
}


ring_case 2 tcp
ring_case 3 tcp

# libawgstar's awg_barrier() called again after ETIMEDOUT, on a real ring:
# both nodes run ROUNDS rounds (write its slot, barrier, check both slots
# show the round, barrier) with AWG_BARRIER_TIMEOUT_MS=200, and one of
# them is held up for 2 s.  First node 1's program is stopped: node 0's
# calls time out while it waits and are resumed (retries counted, > 0).
# Then node 1's awgstard is stopped (less than the token timeout, so no
# node is dropped): whichever calls time out or wait in a flush, both must
# stay in step.  Rounds checked exactly on both nodes.
libbar_case() {	# libbar_case program|daemon: which of node 1's is stopped
	local what=$1 rounds=400 rc=0 running=no out r0 r1 victim
	AWG_BARRIER_TIMEOUT_MS=200 "$PROG" libbarrier "$(awg_dev 0)" $rounds >"$AWG_LOG/lb0" 2>&1 &
	local b0=$!
	AWG_BARRIER_TIMEOUT_MS=200 "$PROG" libbarrier "$(awg_dev 1)" $rounds >"$AWG_LOG/lb1" 2>&1 &
	local b1=$!
	sleep 0.5
	if [[ $what == program ]]; then victim=$b1; else victim=${AWG_PIDS[1]}; fi
	kill -0 "$b0" 2>/dev/null && kill -0 "$b1" 2>/dev/null && running=yes
	kill -STOP "$victim"
	sleep 2
	kill -CONT "$victim"
	wait "$b0" || rc=1
	wait "$b1" || rc=1
	r0=$(sed -n 's/^retries //p' "$AWG_LOG/lb0")
	r1=$(sed -n 's/^retries //p' "$AWG_LOG/lb1")
	out="node 0: $(tr '\n' ' ' <"$AWG_LOG/lb0")node 1: $(tr '\n' ' ' <"$AWG_LOG/lb1")"
	if [[ $what == program ]]; then
		check "libawgstar: $rounds rounds of awg_barrier, node 1's program stopped 2 s: node 0's timed-out calls resumed, both in step ($out)" \
			test "$rc" = 0 -a "$running" = yes -a "${r0:-0}" -gt 0
	else
		check "libawgstar: $rounds rounds of awg_barrier, node 1's awgstard stopped 2 s: both in step, nobody dropped ($out; live_mask $(awg_show 0 live_mask))" \
			test "$rc" = 0 -a "$running" = yes -a "$(awg_show 0 live_mask)" = 0x3
	fi
}
fresh
if awg_ring_start 2 tcp --token-timeout-ms 10000; then
	libbar_case program
	libbar_case daemon
	awg_ring_stop
else
	notok "ring of 2 for the awg_barrier retry cases"
	skip "no ring"
fi

# CRC errors: nodes 1 and 2 treat 10% of frames as damaged.
fresh
if awg_ring_start 3 tcp; then
	"$AWG_BIN/awgstard" --set crc_inject=100 --device "$(awg_dev 1)"
	"$AWG_BIN/awgstard" --set crc_inject=100 --device "$(awg_dev 2)"
	r0=$(awg_show 0 retries); r1=$(awg_show 1 retries)
	check "CRC errors injected at nodes 1 and 2 (10%): every node's data everywhere, replicas identical" \
		mix_all 3 800 777
	e=$(($(awg_show 1 crc_errors) + $(awg_show 2 crc_errors)))
	r=$(($(awg_show 0 retries) + $(awg_show 1 retries) - r0 - r1))
	check "... $e CRC errors seen, $r frames sent again" test "$e" -gt 0 -a "$r" -gt 0
	"$AWG_BIN/awgstard" --set crc_inject=0 --device "$(awg_dev 1)"
	"$AWG_BIN/awgstard" --set crc_inject=0 --device "$(awg_dev 2)"
	awg_ring_stop
else
	notok "ring of 3 for the CRC test"
	skip "no ring"
fi

# The mean over the rotations between two stats lines, from the running
# means A and B over C0 and C1 rotations (0 when none passed).
window_mean() {
	awk -v a="$1" -v b="$2" -v c0="$3" -v c1="$4" \
		'BEGIN { printf "%.0f", (c1 > c0 ? (b * c1 - a * c0) / (c1 - c0) : 0) }'
}

# The timing model over the ring, 2 and 3 nodes: 4000 km of fiber (20 ms a
# rotation), long enough that the emulated transport (several TCP hops
# under TCG, on a host that may be busy) fits in a rotation.  A kernel the
# runner declares slow (DLM_TIMEOUT_SCALE > 1: make check-debug's KASAN,
# lockdep and DEBUG_PAGEALLOC kernel) carries the token between boards in
# 50-80 ms, more than the longest fiber the model takes (10000 km, 50 ms),
# so no rotation there can match the model: those two checks are skipped.
for nodes in 2 3; do
	fiber=4000000
	if ((${DLM_TIMEOUT_SCALE:-1} > 1)); then
		skip "timing model, $nodes nodes: this kernel is slowed x$DLM_TIMEOUT_SCALE (DLM_TIMEOUT_SCALE), a rotation cannot keep to the model"
		continue
	fi
	if ! awg_ring_start "$nodes" tcp; then
		notok "ring of $nodes for the timing model"
		continue
	fi
	for ((i = 0; i < nodes; i++)); do
		"$AWG_BIN/awgstard" --set "mode=model,fiber=$fiber" --device "$(awg_dev "$i")"
	done
	# A busy host only makes rotations late: up to three tries of 100
	# writes, the first within 10% counts (awg_board_test's timing_model).
	for try in 1 2 3; do
		b0=$("$PROG" stats "$(awg_dev 0)")
		"$PROG" order "$(awg_dev $((nodes - 1)))" writer 100 $((3 << 20))
		b1=$("$PROG" stats "$(awg_dev 0)")
		read -r _ c0 _ m0 _ mod0 _ _ <<<"$b0"
		read -r _ c1 _ m1 _ mod1 _ _ <<<"$b1"
		cnt=$((c1 - c0))
		meas=$(window_mean "$m0" "$m1" "$c0" "$c1")
		model=$(window_mean "$mod0" "$mod1" "$c0" "$c1")
		echo "# try $try, $nodes nodes, L = $fiber m: $cnt busy rotations, measured $meas ns, model $model ns (500*$nodes + 5*$fiber = $((500 * nodes + 5 * fiber)) + line)"
		awk -v m="$meas" -v e="$model" 'BEGIN { exit !(m <= 1.10 * e) }' && break
	done
	check "timing model, $nodes nodes: rotation within 10% of 500 N + 5 L + line time ($meas vs $model ns, try $try)" \
		awk -v m="$meas" -v e="$model" -v b=$((500 * nodes + 5 * fiber)) -v c="$cnt" \
		'BEGIN { exit !(c >= 75 && m >= 0.90 * e && m <= 1.10 * e && e >= b && e <= b + 300000) }'
	for ((i = 0; i < nodes; i++)); do
		"$AWG_BIN/awgstard" --set "mode=fast,fiber=10" --device "$(awg_dev "$i")"
	done
	awg_ring_stop
done

# A node dies mid-run: its daemon is killed while every node writes.
fresh
if awg_ring_start 3 tcp --token-timeout-ms 1000; then
	gen0=$(awg_show 1 regenerations)
	pids=()
	for i in 0 1; do
		"$PROG" mix "$(awg_dev "$i")" $((900 + i)) 3000 "$AREA" "$ALEN" $((PRIV + i * 1048576)) &
		pids+=($!)
	done
	"$PROG" mix "$(awg_dev 2)" 902 3000 "$AREA" "$ALEN" $((PRIV + 2 * 1048576)) &
	p2=$!
	sleep 2
	kill -KILL "${AWG_PIDS[2]}"
	rc=0
	for p in "${pids[@]}"; do wait "$p" || rc=1; done
	wait "$p2"
	check "node 2's daemon killed mid-run: the writers of nodes 0 and 1 finish" test $rc = 0
	check "... node 0 dropped node 2 (live_mask $(awg_show 0 live_mask), node_changes $(awg_show 0 node_changes))" \
		test "$(awg_show 0 live_mask)" == 0x3 -a "$(awg_show 0 node_changes)" -ge 1
	check "... node 2 is alone again (ring $(awg_show 2 ring))" test "$(awg_show 2 ring)" == loopback
	check "... nodes 0 and 1: each other's data, identical replicas" \
		eval '"$PROG" check "$(awg_dev 0)" 901 $((PRIV + 1048576)) && "$PROG" check "$(awg_dev 1)" 900 $PRIV && same_sums 0 1'
	# An event to the dead node is refused; one to the live node arrives.
	e2=$("$PROG" event "$(awg_dev 0)" send 2 5 66 2>&1)
	r2=$?
	"$PROG" event "$(awg_dev 0)" send 1 5 67
	s=$("$PROG" event "$(awg_dev 1)" wait 5 10000)
	check "... an event from node 0 to node 2 is refused (status $r2: $e2), one to node 1 arrives ($s)" \
		test "$r2" = 1 -a "$s" == "from 0 data 67" -a -n "$(grep -F 'No route to host' <<<"$e2")"
	echo "# node 1 saw $(($(awg_show 1 regenerations) - gen0)) new token(s)"
	awg_ring_stop
else
	notok "ring of 3 for the node-death test"
	skip "no ring"
	skip "no ring"
	skip "no ring"
	skip "no ring"
fi

# The hub against bogus peers (two fake nodes in Python): node 1 joins 6 s
# after the hub started waiting (a hello has 5 s from its connection, not
# from the wait's start); a connection that closes before its hello is
# refused and the ring still forms; node 1
# answers the token with a length no token has (0xffffffff) and is
# dropped; node 2 answers with 64 bytes the board refuses as a token and
# is dropped; the hub goes on alone.  Before 2026-12-02 the first ended
# the hub's join, the second made it copy 4 GiB between two 68 KB
# buffers, the third made it exit.
bogus_peers() {
	local port=$((20000 + RANDOM % 20000)) hub
	fresh || return 1
	"$AWG_BIN/awgstard" --node 0 --nodes 3 --listen "127.0.0.1:$port" \
		--device "$(awg_dev 0)" >"$AWG_LOG/bogus.log" 2>&1 &
	hub=$!
	AWG_PIDS=("$hub")
	python3 - "$port" <<'PY' || return 1
import socket, struct, sys, time
port = int(sys.argv[1])


def conn():
    for _ in range(100):
        try:
            return socket.create_connection(('127.0.0.1', port), timeout=30)
        except OSError:
            time.sleep(0.1)
    sys.exit('the hub does not listen')


def node(i):
    s = conn()
    s.sendall(struct.pack('=IIII', 0x48475741, 1, i, 3))    # node i of 3
    return s


def token(s):
    n = struct.unpack('=I', s.recv(4, socket.MSG_WAITALL))[0]
    s.recv(n, socket.MSG_WAITALL)


time.sleep(6)                       # past the 5 s a hello may take
n1 = node(1)                        # the hub waited 6 s: still welcome
conn().close()                      # no hello at all
n2 = node(2)
token(n1)
n1.sendall(b'\xff\xff\xff\xff')      # a length no token has
token(n2)                           # the new token, without node 1
n2.sendall(struct.pack('=I', 64) + bytes(64))   # not a token
time.sleep(1)
PY
	for _ in $(seq 50); do
		grep -q "refuses" "$AWG_LOG/bogus.log" && break
		sleep 0.1
	done
	sleep 0.5
	kill -0 "$hub" && grep -q "refused a connection" "$AWG_LOG/bogus.log" &&
		grep -q "node left the ring.*node=1" "$AWG_LOG/bogus.log" &&
		grep -q "node sent a token the board refuses.*node=2" "$AWG_LOG/bogus.log" &&
		[[ $(awg_show 0 live_mask) == 0x1 ]]
}
if bogus_peers; then
	ok "hub: a peer without a hello refused, a node replying a 4 GiB token and one replying garbage dropped, the hub goes on alone"
else
	notok "hub against bogus peers"
	sed 's/^/#   /' "$AWG_LOG/bogus.log"
fi
awg_ring_stop

# A malformed token from a node in the middle of the ring: a fake node 1
# (Python) answers the token with 64 bytes that are no token, before a
# real node 2.  The hub checks what node 1 returned (AWG_VISIT_CHECK) and
# drops node 1; node 2 stays on the ring.  Before 2026-12-02 the hub
# handed the garbage on: node 2's board refused it, node 2's daemon left,
# and the culprit was kept.
culprit() {
	local port=$((20000 + RANDOM % 20000)) t
	fresh || return 1
	"$AWG_BIN/awgstard" --node 0 --nodes 3 --listen "127.0.0.1:$port" \
		--device "$(awg_dev 0)" >"$AWG_LOG/culprit0.log" 2>&1 &
	AWG_PIDS=($!)
	python3 - "$port" <<'PY' &
import socket, struct, sys, time
port = int(sys.argv[1])
for _ in range(100):
    try:
        s = socket.create_connection(('127.0.0.1', port), timeout=30)
        break
    except OSError:
        time.sleep(0.1)
else:
    sys.exit('the hub does not listen')
s.sendall(struct.pack('=IIII', 0x48475741, 1, 1, 3))    # node 1 of 3
n = struct.unpack('=I', s.recv(4, socket.MSG_WAITALL))[0]
s.recv(n, socket.MSG_WAITALL)
s.sendall(struct.pack('=I', 64) + bytes(64))    # not a token
time.sleep(3)
PY
	AWG_PIDS+=($!)
	sleep 0.5	# node 1 first: node 2's join does not race it
	"$AWG_BIN/awgstard" --node 2 --nodes 3 --hub "127.0.0.1:$port" \
		--device "$(awg_dev 2)" >"$AWG_LOG/culprit2.log" 2>&1 &
	AWG_PIDS+=($!)
	for ((t = 0; t < 100; t++)); do
		grep -q "refuses" "$AWG_LOG/culprit0.log" && break
		sleep 0.1
	done
	sleep 1		# rotations of the ring without node 1
	kill -0 "${AWG_PIDS[0]}" && kill -0 "${AWG_PIDS[2]}" &&
		grep -q "node sent a token the board refuses.*node=1" "$AWG_LOG/culprit0.log" &&
		! grep -Eq "(left the ring|refuses).*node=2" "$AWG_LOG/culprit0.log" &&
		! grep -q "left the ring" "$AWG_LOG/culprit2.log" &&
		[[ $(awg_show 0 live_mask) == 0x5 && $(awg_show 2 live_mask) == 0x5 &&
		   $(awg_show 2 ring) == daemon ]]
}
if culprit; then
	ok "hub: node 1 answers with a malformed token: node 1 is dropped, node 2 stays on the ring (live_mask 0x5)"
else
	notok "hub against a malformed token in the middle of the ring"
	sed 's/^/#   0: /' "$AWG_LOG/culprit0.log"
	sed 's/^/#   2: /' "$AWG_LOG/culprit2.log"
fi
awg_ring_stop

# RDMA verbs between the boards (soft-RoCE).
if ! modprobe rdma_rxe 2>/dev/null; then
	skip "rdma_rxe not available"
	skip "rdma_rxe not available"
elif fresh && awg_ring_start 3 verbs; then
	ok "ring of 3 over RDMA verbs (soft-RoCE) forms"
	check "verbs, 3 nodes: concurrent overlapping writes: every node's data everywhere, replicas identical" \
		mix_all 3 800 $((RANDOM * 10 + 5))
	awg_ring_stop
else
	notok "ring of 3 over RDMA verbs forms"
	skip "no ring"
fi

echo "1..$n"
if ((fails)); then
	echo "# logs:"
	sed 's/^/#   /' "$AWG_LOG"/node*.log 2>/dev/null | tail -40
fi
exit 0
