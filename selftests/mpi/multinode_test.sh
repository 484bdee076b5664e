#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# multinode_test.sh [TRIAD_MB] [LOCAL_PERCENT] - dlmd's memory server ranks on
# other "nodes": two network namespaces, each with its own hostname (UTS
# namespace) and its own network stack, joined to the compute node (the
# initial namespace, where dlmem.ko's netlink family lives) by a bridge
# 10.9.0.0/24.  MPICH's hydra starts one rank per node through a launcher
# that enters the node's namespaces where ssh would log in (see nodesh.sh),
# so MPI sees three hosts, and (UCX_TLS=tcp) moves the pages over TCP
# across the bridge, not through the shared memory the namespaces share.  Then, through /dev/dlm: dlm_rw's integrity
# checks, and the triad (stream) at LOCAL_PERCENT (default 10) on the
# three-node job and on a one-node job side by side.  The bridge's byte
# counters show that the pages crossed the network.  TAP; part of the VM
# run, or alone:
#
#   vm-images/vm-run -- selftests/mpi/multinode_test.sh
#
# What the namespaces share with each other, unlike separate machines: the
# kernel, the CPUs, the file systems and /dev/shm (as an NFS home would
# be shared on a cluster); UCX_TLS=tcp keeps MPI off the shared memory.
set -uo pipefail
# shellcheck source=selftests/daemon/lib.sh
. "$(dirname "$0")/../daemon/lib.sh"
# shellcheck source=selftests/mpi/lib.sh
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
rw=$build/selftests/remote/dlm_rw
mb=${1:-16}
pct=${2:-10}
echo "TAP version 13"
if [[ $(id -u) != 0 ]]; then
	echo "1..0 # SKIP needs root (run it with vm-images/vm-run)"
	exit 4
fi
if [[ ! -x $bin/dlmd-mpich ]] || ! command -v mpiexec.mpich >/dev/null; then
	echo "1..0 # SKIP needs dlmd-mpich and mpiexec.mpich (make deps; make)"
	exit 4
fi
need "$rw" "$build/bench/stream"
[[ -d /sys/module/dlmem ]] || insmod "$top/kmod/dlmem.ko" || exit 1
echo "1..7"

nodes_down() {
	local i
	for i in 1 2; do
		ip netns del "dlmnode$i" 2>/dev/null
	done
	ip link del dlmbr0 2>/dev/null
}
trap 'nodes_down; cleanup' EXIT
nodes_down
ip link add dlmbr0 type bridge && ip addr add 10.9.0.1/24 dev dlmbr0 &&
	ip link set dlmbr0 up || { echo "Bail out! no bridge"; exit 1; }
for i in 1 2; do
	ip netns add "dlmnode$i" &&
	ip link add "dlmv$i" type veth peer name eth0 netns "dlmnode$i" &&
	ip link set "dlmv$i" master dlmbr0 up &&
	ip -n "dlmnode$i" addr add "10.9.0.$((i + 1))/24" dev eth0 &&
	ip -n "dlmnode$i" link set eth0 up &&
	ip -n "dlmnode$i" link set lo up || { echo "Bail out! node $i"; exit 1; }
done
# A refused connection proves the route (no ping in the guest); the
# bridge's ports may take a moment to forward.
reach() {
	local out
	out=$(ip netns exec dlmnode1 timeout 5 bash -c 'exec 3<>/dev/tcp/10.9.0.3/9' 2>&1)
	[[ $out == *"Connection refused"* ]]
}
for ((i = 0; i < 20; i++)); do
	reach && break
	sleep 0.5
done
if reach; then
	ok "two nodes (namespaces dlmnode1, dlmnode2) reach each other over the bridge"
else
	notok "the nodes do not reach each other"
fi

printf '# multinode: local MB, then ranks 1 and 2\n%s\n%s\n%s\n' \
	$((3 * mb + 8)) $((3 * mb + 8)) $((3 * mb + 8)) >"$tmp/memfile"

# job NAME HOSTS [ENV=VALUE]: mpiexec -n 3 dlmd over HOSTS; waits for
# rank 0 to register.  Debian's MPICH runs over UCX, which would find the
# other ranks' shared memory (/dev/shm is common to the namespaces): for
# the three-node job UCX_TLS=tcp,self and each rank's own network device.
job() {
	if [[ $1 == multi ]]; then
		env UCX_TLS=tcp,self mpiexec.mpich -launcher ssh \
			-launcher-exec "$here/nodesh.sh" -localhost 10.9.0.1 \
			-hosts "$2" \
			-n 1 -env UCX_NET_DEVICES dlmbr0 "$bin/dlmd" -f "$tmp/memfile" : \
			-n 2 -env UCX_NET_DEVICES eth0 "$bin/dlmd" -f "$tmp/memfile" \
			>"$tmp/$1.log" 2>&1 &
	else
		mpiexec.mpich -n 3 "$bin/dlmd" -f "$tmp/memfile" >"$tmp/$1.log" 2>&1 &
	fi
	JOB=$!
	pids+=("$JOB")
	registered "$tmp/$1.log" "$JOB" && return 0
	diag "$tmp/$1.log"
	return 1
}

# stop NAME: SIGTERM to rank 0, the job ends.  A job still there after
# 60 s is shown and killed (seen once on 6.12 with the three-node job:
# rank 0 had unregistered, mpiexec did not return); the test then goes
# on, and its last result checks that no daemon is left in the kernel.
stop() {
	kill -TERM "$(rank0_pid "$tmp/$1.log")"
	if ! timeout 60 tail --pid="$JOB" -f /dev/null; then
		echo "# WARNING: the $1 job did not end within 60 s of SIGTERM to rank 0; what is left, then killed:"
		ps -eo pid,stat,wchan:24,args | grep -E '[d]lmd|[h]ydra|[m]piexec' |
			sed 's/^/#   /'
		pkill -KILL -f "$bin/dlmd"
		pkill -KILL -f hydra_pmi_proxy
		kill -KILL "$JOB" 2>/dev/null
	fi
	wait "$JOB"
}

bytes() {	# bytes through the compute node's side of the bridge
	echo $(($(cat /sys/class/net/dlmbr0/statistics/rx_bytes) +
		$(cat /sys/class/net/dlmbr0/statistics/tx_bytes)))
}

if job multi 10.9.0.1,10.9.0.2,10.9.0.3 &&
   grep -q 'prog=dlmd-rank1 msg="serving"' "$tmp/multi.log"; then
	ok "mpiexec.mpich -hosts 10.9.0.1,10.9.0.2,10.9.0.3 (one rank each) dlmd: rank 0 registered, ranks 1 and 2 serve"
else
	notok "three-node job"
	exit 1
fi
ranks_host=$(for i in 1 2; do
	r=$(sed -n "s/.*prog=dlmd-rank$i msg=\"serving\".* pid=\([0-9]*\).*/\1/p" "$tmp/multi.log")
	ip netns identify "$r"
done | tr '\n' ' ')
b0=$(bytes)
rwcheck seq "dlm_rw $((3 * mb)) MB at $pct% local over the nodes, every word back" \
	-t $((3 * mb)) -b $((3 * mb * 1024 * pct / 100 / 1024 * 1024)) -p 1024
b1=$(bytes)
if ((b1 - b0 > 3 * mb * 1048576)); then
	ok "$(((b1 - b0) / 1048576)) MB crossed the bridge for it (server ranks in namespaces: $ranks_host)"
else
	notok "only $(((b1 - b0) / 1048576)) MB on the bridge for $((3 * mb)) MB of data"
fi
rwcheck rand "dlm_rw 16 MB, 64 KB pages, random, 2 threads over the nodes, every word back" \
	-t 16 -b 1024 -p 64 -a random -j 2
multi=$(timeout 600 "$build/bench/stream" -m dlm -s "$mb" -l "$pct" -i 3 -q)
stop multi

if job single; then
	one=$(timeout 600 "$build/bench/stream" -m dlm -s "$mb" -l "$pct" -i 3 -q)
	stop single
else
	one=
fi
t3=$(sed -n 's/.*triad_mbs=\([0-9.]*\).*/\1/p' <<<"$multi")
t1=$(sed -n 's/.*triad_mbs=\([0-9.]*\).*/\1/p' <<<"$one")
if [[ -n $t3 && -n $t1 && $multi == *bad=0* && $one == *bad=0* ]]; then
	ok "triad $((3 * mb)) MB at $pct% local: three nodes (UCX over TCP) $t3 MB/s, one node (UCX shared memory) $t1 MB/s ($(awk -v a="$t3" -v b="$t1" 'BEGIN { printf "%.2f", a / b }')x)"
else
	notok "triad on three nodes ($multi) and one ($one)"
fi
if [[ $(cat /sys/class/misc/dlm/daemon) == 0 ]]; then
	ok "both jobs ended, no daemon left registered"
else
	notok "a daemon is still registered"
fi
exit "$fail"
