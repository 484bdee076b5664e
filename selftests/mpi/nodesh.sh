#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# nodesh.sh [SSH-OPTIONS] HOST COMMAND - what ssh does for MPICH's hydra
# (mpiexec -launcher ssh -launcher-exec nodesh.sh) and for Open MPI's
# mpirun (--mca plm_rsh_agent nodesh.sh), for the namespace "nodes" of
# multinode_test.sh: 10.9.0.N+1 is namespace dlmnodeN, entered with
# a UTS namespace of its own named dlmnodeN (MPI tells nodes apart by
# hostname); 10.9.0.1 is the compute node itself.
while [[ $1 == -* ]]; do shift; done
host=$1
shift
case $host in
10.9.0.1 | localhost) exec bash -c "$*" ;;
10.9.0.[2-9])
	node=dlmnode$((${host##*.} - 1))
	exec ip netns exec "$node" unshare --uts bash -c "hostname $node && $*"
	;;
*)
	echo "nodesh.sh: unknown node $host" >&2
	exit 255
	;;
esac
