#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# verbs_replica_test.sh - dlmd --replicas 2 over RDMA verbs: the tests of
# selftests/daemon/dlmd_replica_test.sh (both servers get every page; one
# killed after the writes and again mid-run loses nothing; both killed
# SIGBUS cleanly; a killed server restarted on its address rejoins, its
# copy buffer registered beside the frame pool, and then holds every page
# alone) with dlm-memserver --transport verbs on soft-RoCE (rxe.sh), in a
# VM:
#
#   vm-images/vm-run -- selftests/verbs/verbs_replica_test.sh
#
# TAP, from dlmd_replica_test.sh.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=selftests/verbs/rxe.sh
. "$here/rxe.sh"

echo "TAP version 13"
if [[ $(id -u) != 0 || -z ${DLM_VM:-} ]]; then
	echo "1..0 # SKIP needs root in a VM (vm-images/vm-run): it adds soft-RoCE devices"
	exit 4
fi
bin=${O:-$here/../../build}/bin
if [[ $("$bin/dlmd" --version 2>/dev/null) != *"transports: tcp verbs"* ]]; then
	echo "1..0 # SKIP dlmd built without rdma-core (make deps; make)"
	exit 4
fi
if [[ -e /sys/class/infiniband/rxe0 ]] || ! rxe_setup; then
	echo "1..0 # SKIP no soft-RoCE devices on a veth pair (rdma_rxe missing, or rxe0 taken)"
	exit 4
fi
trap rxe_teardown EXIT
# The servers on vb's address, dlmd through va: RDMA crosses the pair.
DLM_REPLICA_TRANSPORT=verbs DLM_REPLICA_LISTEN="[$LB%vb]" \
	DLM_REPLICA_CONNECT="[$LB%va]" DLM_REPLICA_RX_IF=vb \
	"$here/../daemon/dlmd_replica_test.sh"
