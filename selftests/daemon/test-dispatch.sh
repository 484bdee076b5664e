#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-dispatch.sh - dlmd's request engine (test-dispatch) against three
# dlm-memservers on 127.0.0.1, one of which gets killed and one frozen;
# each server death is logged exactly once.  TAP.
set -uo pipefail
# shellcheck source=selftests/daemon/lib.sh
. "$(dirname "$0")/lib.sh"

need "$bin/dlm-memserver" "$tests/test-dispatch"
echo "TAP version 13"
echo "1..$((2 + 42))"

args=()
for i in 1 2 3; do
	if ! start_memserver "ms$i" 8; then
		notok "memory server $i starts"
		exit 1
	fi
	args+=("$MS_PORT" "$MS_PID")
done
ok "three 8 MB memory servers on 127.0.0.1"

subtests 42 "$tests/test-dispatch" "${args[@]}"

log=$(ls "$tmp"/sub.*.err)
r2=$(grep -c 'msg="memory server dead.* rank=2 ' "$log")
r3=$(grep -c 'msg="memory server dead.* rank=3 ' "$log")
if ((r2 == 1 && r3 == 1)); then
	ok "each dead server logged once"
else
	notok "each dead server logged once (rank 2: $r2, rank 3: $r3)"
	diag "$log"
fi
exit "$fail"
