# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# rxe.sh - two soft-RoCE devices joined by a veth pair, for the verbs
# tests and benchmark (sourced; needs root, in a VM).
#
# rxe_setup: veth pair va <-> vb (MTU 9000, so RoCE runs at MTU 4096),
# rxe0 on va and rxe1 on vb.  The two ends talk over IPv6 link-local
# addresses scoped to the sending interface: a packet from rxe0 to LB%va
# leaves through va and arrives at vb's rxe1.  (IPv4 between two devices
# of one host would be routed through lo, and soft-RoCE in 6.1/6.12 only
# listens in the initial network namespace, so namespaces do not help.)
# Sets LA and LB (link-local addresses of va and vb).  1 on failure, with
# the reason on stdout as TAP comments.
# Also raises net.core.netdev_max_backlog: a veth delivers through the
# per-CPU backlog, which overflows at the default 1000 packets under
# emulation; the dropped packets are then retried by soft-RoCE, and
# rdma_rxe of 6.1 can mishandle the retry (a WARN in rxe_completer and a
# flushed queue pair).
# rxe_teardown: remove both, restore the backlog.
# rxe_rx_bytes: bytes va received (RDMA READ responses, WRITE ACKs).

rxe_setup() {
	local i
	modprobe rdma_rxe 2>/dev/null
	modprobe rdma_ucm 2>/dev/null
	if ! command -v rdma >/dev/null; then
		echo "# rdma (iproute2) missing: make deps"
		return 1
	fi
	RXE_BACKLOG0=$(sysctl -n net.core.netdev_max_backlog)
	sysctl -qw net.core.netdev_max_backlog=100000
	ip link add va type veth peer name vb || return 1
	ip link set va mtu 9000 up && ip link set vb mtu 9000 up || return 1
	rdma link add rxe0 type rxe netdev va &&
		rdma link add rxe1 type rxe netdev vb || {
		echo "# cannot add soft-RoCE devices (rdma_rxe missing from this kernel?)"
		return 1
	}
	# Link-local addresses usable once duplicate address detection ends.
	for ((i = 0; i < 100; i++)); do
		LA=$(ip -6 addr show dev va scope link | sed -n 's/.*inet6 \(fe80[^/]*\).*/\1/p')
		LB=$(ip -6 addr show dev vb scope link | sed -n 's/.*inet6 \(fe80[^/]*\).*/\1/p')
		if [[ -n $LA && -n $LB ]] &&
		   ! ip -6 addr show dev va | grep -q tentative &&
		   ! ip -6 addr show dev vb | grep -q tentative; then
			return 0
		fi
		sleep 0.1
	done
	echo "# no link-local addresses on va/vb"
	return 1
}

rxe_teardown() {
	rdma link delete rxe0 2>/dev/null
	rdma link delete rxe1 2>/dev/null
	ip link delete va 2>/dev/null
	[[ -z ${RXE_BACKLOG0:-} ]] ||
		sysctl -qw net.core.netdev_max_backlog="$RXE_BACKLOG0"
}

rxe_rx_bytes() {
	cat /sys/class/net/va/statistics/rx_bytes
}
