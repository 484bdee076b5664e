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

# skip WHY: the whole test skipped (the TAP header is dlmd_replica_test's).
skip() {
	printf 'TAP version 13\n1..0 # SKIP %s\n' "$1"
	exit 4
}
[[ $(id -u) == 0 && -n ${DLM_VM:-} ]] ||
	skip "needs root in a VM (vm-images/vm-run): it adds soft-RoCE devices"
bin=${O:-$here/../../build}/bin
[[ $("$bin/dlmd" --version 2>/dev/null) == *"transports: tcp verbs"* ]] ||
	skip "dlmd built without rdma-core (make deps; make)"
[[ ! -e /sys/class/infiniband/rxe0 ]] || skip "rxe0 exists already"
trap rxe_teardown EXIT
rxe_setup >&2 || skip "no soft-RoCE devices on a veth pair (rdma_rxe missing?)"
# The servers on vb's address, dlmd through va: RDMA crosses the pair.
DLM_REPLICA_TRANSPORT=verbs DLM_REPLICA_LISTEN="[$LB%vb]" \
	DLM_REPLICA_CONNECT="[$LB%va]" DLM_REPLICA_RX_IF=vb \
	"$here/../daemon/dlmd_replica_test.sh"
