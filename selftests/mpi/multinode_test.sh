#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# multinode_test.sh [TRIAD_MB] [LOCAL_PERCENT] - dlmd's memory server ranks on
# other "nodes": two network namespaces, each with its own hostname (UTS
# namespace) and its own network stack, joined to the compute node (the
# initial namespace, where dlmem.ko's netlink family lives) by a bridge
# 10.9.0.0/24.  Each MPI starts one rank per node through a launcher that
# enters the node's namespaces where ssh would log in (see nodesh.sh), so
# MPI sees three hosts, and moves the pages over TCP across the bridge,
# not through the shared memory the namespaces share: MPICH's hydra
# (-launcher-exec nodesh.sh) with UCX_TLS=tcp, and Open MPI's mpirun
# (plm_rsh_agent nodesh.sh) with its tcp BTL on the bridge's subnet.  For
# each MPI, through /dev/dlm: dlm_rw's integrity checks, and the triad
# (stream) at LOCAL_PERCENT (default 10) on the three-node job and on a
# one-node job side by side.  The bridge's byte counters show that the
# pages crossed the network.  TAP; part of the VM run, or alone:
#
#   vm-images/vm-run -- selftests/mpi/multinode_test.sh
#
# What the namespaces share with each other, unlike separate machines: the
# kernel, the CPUs, the file systems and /dev/shm (as an NFS home would
# be shared on a cluster); the MPIs' TCP settings keep them off the
# shared memory.
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
impls=()
[[ -x $bin/dlmd-mpich ]] && command -v mpiexec.mpich >/dev/null && impls+=(mpich)
[[ -x $bin/dlmd-openmpi ]] && command -v mpirun.openmpi >/dev/null && impls+=(openmpi)
if ((${#impls[@]} == 0)); then
	echo "1..0 # SKIP needs dlmd-mpich and mpiexec.mpich, or dlmd-openmpi and mpirun.openmpi (make deps; make)"
	exit 4
fi
need "$rw" "$build/bench/stream"
[[ -d /sys/module/dlmem ]] || insmod "$top/kmod/dlmem.ko" || exit 1
echo "1..14"

nodes_down() {
	local i
	for i in 1 2; do
		ip netns del "dlmnode$i" 2>/dev/null
	done
	ip link del dlmbr0 2>/dev/null
}
asan_timeouts
trap 'nodes_down; asan_timeouts_restore; cleanup' EXIT
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

# job IMPL multi|single: mpiexec -n 3 dlmd, over the three nodes or on
# this one; waits for rank 0 to register.  Debian's MPICH runs over UCX,
# which would find the other ranks' shared memory (/dev/shm is common to
# the namespaces): for the three-node job UCX_TLS=tcp,self and each rank's
# own network device.  Open MPI tells nodes apart by hostname, so its
# shared-memory BTL stays within a node anyway; its tcp BTL and its
# runtime's connections are held to the bridge's subnet.
job() {
	local impl=$1 where=$2 hosts=10.9.0.1,10.9.0.2,10.9.0.3
	local log=$tmp/$impl-$where.log
	case $impl-$where in
	mpich-multi)
		env UCX_TLS=tcp,self mpiexec.mpich -launcher ssh \
			-launcher-exec "$here/nodesh.sh" -localhost 10.9.0.1 \
			-hosts "$hosts" \
			-n 1 -env UCX_NET_DEVICES dlmbr0 "$bin/dlmd" -f "$tmp/memfile" : \
			-n 2 -env UCX_NET_DEVICES eth0 "$bin/dlmd" -f "$tmp/memfile" \
			>"$log" 2>&1 &
		;;
	mpich-single)
		mpiexec.mpich -n 3 "$bin/dlmd" -f "$tmp/memfile" >"$log" 2>&1 &
		;;
	openmpi-multi)
		mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none \
			-H "$hosts" -np 3 --mca plm_rsh_agent "$here/nodesh.sh" \
			--mca pml ob1 --mca btl self,tcp \
			--mca btl_tcp_if_include 10.9.0.0/24 \
			--mca oob_tcp_if_include 10.9.0.0/24 \
			"$bin/dlmd" -f "$tmp/memfile" >"$log" 2>&1 &
		;;
	openmpi-single)
		mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none \
			-np 3 "$bin/dlmd" -f "$tmp/memfile" >"$log" 2>&1 &
		;;
	esac
	JOB=$!
	pids+=("$JOB")
	registered "$log" "$JOB" && return 0
	diag "$log"
	return 1
}

# stop IMPL multi|single: SIGTERM to rank 0, the job ends.  A job still
# there after 60 s is shown and killed (seen once on 6.12 with MPICH's
# three-node job: rank 0 had unregistered, mpiexec did not return); the
# test then goes on, and its last result checks that no daemon is left in
# the kernel.
stop() {
	kill -TERM "$(rank0_pid "$tmp/$1-$2.log")"
	if ! timeout 60 tail --pid="$JOB" -f /dev/null; then
		echo "# WARNING: the $1 $2 job did not end within 60 s of SIGTERM to rank 0; what is left, then killed:"
		kill_job
	fi
	wait "$JOB"
}

# kill_job: show and SIGKILL what is left of the job (its launcher, the
# MPIs' proxies, every dlmd rank), so that the next job can register.
kill_job() {
	ps -eo pid,stat,wchan:24,args | grep -E '[d]lmd|[h]ydra|[m]piexec|[o]rted|[m]pirun' |
		sed 's/^/#   /'
	pkill -KILL -f "$bin/dlmd"
	pkill -KILL -f hydra_pmi_proxy
	pkill -KILL -x orted
	kill -KILL "$JOB" 2>/dev/null
	wait "$JOB" 2>/dev/null
}

bytes() {	# bytes through the compute node's side of the bridge
	echo $(($(cat /sys/class/net/dlmbr0/statistics/rx_bytes) +
		$(cat /sys/class/net/dlmbr0/statistics/tx_bytes)))
}

# waits IMPL multi|single: what --mpi-server-wait auto chose in each rank
# of the job, from its log: "server_wait=W node_ranks=N" for ranks 0, 1
# and 2, joined by " / ".
waits() {
	local log=$tmp/$1-$2.log i
	{
		sed -n 's/.*msg="MPI job".* \(server_wait=[a-z]* node_ranks=[0-9]*\).*/\1/p' "$log"
		for i in 1 2; do
			sed -n "s/.*prog=dlmd-rank$i msg=\"serving\".* \(server_wait=[a-z]* node_ranks=[0-9]*\).*/\1/p" "$log"
		done
	} | paste -sd/ | sed 's|/| / |g'
}

# want N: the three ranks' line of waits for a job with N ranks on each
# node: each sleeps where the node's ranks are at least its CPUs.  The
# namespaces share the VM's CPUs, but MPI sees one rank on each node, so
# on three nodes the ranks poll as they would on separate machines.
want() {
	local w=poll
	(($1 >= $(getconf _NPROCESSORS_ONLN))) && w="sleep"
	echo "server_wait=$w node_ranks=$1 / server_wait=$w node_ranks=$1 / server_wait=$w node_ranks=$1"
}

# run IMPL: the three-node job's checks, then the triad on one node, then
# each rank's server wait on both; six results.
run() {
	local impl=$1 ranks_host b0 b1 multi one t1 t3 i r w1 w3
	if job "$impl" multi &&
	   grep -q 'prog=dlmd-rank1 msg="serving"' "$tmp/$impl-multi.log"; then
		ok "$impl: mpiexec over 10.9.0.1,10.9.0.2,10.9.0.3 (one rank each) dlmd: rank 0 registered, ranks 1 and 2 serve"
	else
		notok "$impl: three-node job"
		echo "# what is left of it, killed:"
		kill_job
		for i in 1 2 3 4 5; do skip "$impl: no three-node job"; done
		return
	fi
	ranks_host=$(for i in 1 2; do
		r=$(sed -n "s/.*prog=dlmd-rank$i msg=\"serving\".* pid=\([0-9]*\).*/\1/p" "$tmp/$impl-multi.log")
		ip netns identify "$r"
	done | tr '\n' ' ')
	b0=$(bytes)
	rwcheck "$impl-seq" "$impl: dlm_rw $((3 * mb)) MB at $pct% local over the nodes, every word back" \
		-t $((3 * mb)) -b $((3 * mb * 1024 * pct / 100 / 1024 * 1024)) -p 1024
	b1=$(bytes)
	if ((b1 - b0 > 3 * mb * 1048576)) && [[ $ranks_host == "dlmnode1 dlmnode2 " ]]; then
		ok "$impl: $(((b1 - b0) / 1048576)) MB crossed the bridge for it (server ranks in namespaces: $ranks_host)"
	else
		notok "$impl: $(((b1 - b0) / 1048576)) MB on the bridge for $((3 * mb)) MB of data (server ranks in namespaces: '$ranks_host')"
	fi
	rwcheck "$impl-rand" "$impl: dlm_rw 16 MB, 64 KB pages, random, 2 threads over the nodes, every word back" \
		-t 16 -b 1024 -p 64 -a random -j 2
	multi=$(timeout 600 "$build/bench/stream" -m dlm -s "$mb" -l "$pct" -i 3 -q)
	stop "$impl" multi

	if job "$impl" single; then
		one=$(timeout 600 "$build/bench/stream" -m dlm -s "$mb" -l "$pct" -i 3 -q)
		stop "$impl" single
	else
		echo "# the one-node job did not come up; what is left of it, killed:"
		kill_job
		one=
	fi
	t3=$(sed -n 's/.*triad_mbs=\([0-9.]*\).*/\1/p' <<<"$multi")
	t1=$(sed -n 's/.*triad_mbs=\([0-9.]*\).*/\1/p' <<<"$one")
	if [[ -n $t3 && -n $t1 && $multi == *bad=0* && $one == *bad=0* ]]; then
		ok "$impl: triad $((3 * mb)) MB at $pct% local: three nodes (over TCP) $t3 MB/s, one node (shared memory) $t1 MB/s ($(awk -v a="$t3" -v b="$t1" 'BEGIN { printf "%.2f", a / b }')x)"
	else
		notok "$impl: triad on three nodes ($multi) and one ($one)"
	fi
	w3=$(waits "$impl" multi)
	w1=$(waits "$impl" single)
	if [[ $w3 == "$(want 1)" && $w1 == "$(want 3)" ]]; then
		ok "$impl: --mpi-server-wait auto counts each rank's node: three nodes, one rank each: $w3; one node: $w1 ($(getconf _NPROCESSORS_ONLN) CPUs)"
	else
		notok "$impl: server waits on three nodes '$w3' (want '$(want 1)'), on one '$w1' (want '$(want 3)')"
	fi
}

for impl in mpich openmpi; do
	if [[ " ${impls[*]} " == *" $impl "* ]]; then
		run "$impl"
	else
		for i in 1 2 3 4 5 6; do skip "$impl: dlmd-$impl or its launcher missing (make deps; make)"; done
	fi
done
if [[ $(cat /sys/class/misc/dlm/daemon) == 0 ]]; then
	ok "every job ended, no daemon left registered"
else
	notok "a daemon is still registered"
fi
exit "$fail"
