# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# lib.sh - AWG-STAR rings of several boards in one machine (sourced; root,
# in a VM).  dlmem.ko with awg_boards=N gives /dev/awgstar, /dev/awgstar1,
# ... /dev/awgstar{N-1}, each a node of its own; one awgstard per board
# carries the token between them over TCP on 127.0.0.1, or over RDMA
# between two soft-RoCE devices (selftests/verbs/rxe.sh).
#
#   awg_reload N          reload dlmem.ko with N boards (rmmod first)
#   awg_dev I             the device of board I
#   awg_ring_start N [tcp|verbs] [EXTRA awgstard options...]
#                         daemons for boards 0 .. N-1; waits until the
#                         ring has formed (every node live); 1 on failure
#   awg_ring_stop         SIGTERM every daemon, wait for them
#   awg_show I KEY        one value of awgstard --show of board I
# AWG_PIDS holds the daemons' pids (index = node), AWG_LOG their log dir.

AWG_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
AWG_BIN=${DLM_BIN:-$AWG_TOP/build}/bin
AWG_KO=${DLM_KO:-$AWG_TOP/kmod/dlmem.ko}
AWG_PIDS=()
AWG_LOG=${AWG_LOG:-$(mktemp -d /tmp/awgring.XXXXXX)}

awg_reload() {
	local n=$1
	if [[ -d /sys/module/dlmem ]]; then
		rmmod dlmem || return 1
	fi
	insmod "$AWG_KO" awg_boards="$n" || return 1
	udevadm settle 2>/dev/null
	[[ -c $(awg_dev $((n - 1))) ]]
}

awg_dev() {
	if (($1 == 0)); then echo /dev/awgstar; else echo "/dev/awgstar$1"; fi
}

awg_show() {
	"$AWG_BIN/awgstard" --show --device "$(awg_dev "$1")" | sed -n "s/^$2=//p"
}

awg_ring_start() {
	local n=$1 tr=${2:-tcp} port listen hub i t live want
	shift 2 2>/dev/null || shift $#
	port=$((20000 + RANDOM % 20000))
	if [[ $tr == verbs ]]; then
		# shellcheck source=selftests/verbs/rxe.sh
		source "$AWG_TOP/selftests/verbs/rxe.sh"
		ip link show va >/dev/null 2>&1 || rxe_setup || return 1
		listen="[$LB%vb]:$port"
		hub="[$LB%va]:$port"
	else
		listen="127.0.0.1:$port"
		hub="127.0.0.1:$port"
	fi
	AWG_PIDS=()
	"$AWG_BIN/awgstard" --node 0 --nodes "$n" --listen "$listen" \
		--transport "$tr" --device "$(awg_dev 0)" "$@" \
		>"$AWG_LOG/node0.log" 2>&1 &
	AWG_PIDS[0]=$!
	for ((i = 1; i < n; i++)); do
		"$AWG_BIN/awgstard" --node "$i" --nodes "$n" --hub "$hub" \
			--transport "$tr" --device "$(awg_dev "$i")" "$@" \
			>"$AWG_LOG/node$i.log" 2>&1 &
		AWG_PIDS[i]=$!
	done
	want=$(printf '%#x' $(((1 << n) - 1)))
	for ((t = 0; t < 300; t++)); do
		live=$(awg_show $((n - 1)) live_mask)
		if [[ $(awg_show 0 ring) == daemon && $live == "$want" &&
		      $(awg_show 0 live_mask) == "$want" ]]; then
			return 0
		fi
		kill -0 "${AWG_PIDS[0]}" 2>/dev/null || break
		sleep 0.1
	done
	echo "# the ring of $n did not form over $tr:"
	sed 's/^/#   /' "$AWG_LOG"/node*.log
	awg_ring_stop
	return 1
}

awg_ring_stop() {
	local p
	for p in "${AWG_PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in "${AWG_PIDS[@]}"; do
		wait "$p" 2>/dev/null
	done
	AWG_PIDS=()
}
