#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-mirror.sh - dlmd's mirrored pairs (test-mirror) against two
# dlm-memservers on 127.0.0.1: one killed and restarted rejoins while
# writes go on, then holds every page alone; a smaller one is refused.
# The log must show the rejoin, copying only the chunks written, and the
# refusal.  TAP.
set -uo pipefail
# shellcheck source=selftests/daemon/lib.sh
. "$(dirname "$0")/lib.sh"

need "$bin/dlm-memserver" "$tests/test-mirror"
echo "TAP version 13"
echo "1..$((1 + 8 + 1))"

args=("$bin/dlm-memserver")
for s in a b; do
	if ! start_memserver "ms$s" 8; then
		notok "memory server $s starts"
		exit 1
	fi
	args+=("$MS_PORT" "$MS_PID")
done
ok "two 8 MB memory servers on 127.0.0.1"

subtests 8 "$tests/test-mirror" "${args[@]}"

log=$(ls "$tmp"/sub.*.err)
# The rejoin copied the 6 written chunks of 1 MiB, not the 8 of the pair.
if grep 'msg="memory server of a mirrored pair rejoined: replicated again"' "$log" |
	grep -q ' copied_bytes=6291456 ' &&
   grep -q 'msg="memory server of a mirrored pair answers but is smaller than the pair' "$log"; then
	ok "the rejoin (6 MiB written of 8 copied) and the refused smaller server are logged"
else
	notok "the rejoin (6 MiB written of 8 copied) and the refused smaller server are logged"
	diag "$log"
fi
exit "$fail"
