#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-tcp.sh - the tcp transport's read and write lanes (test-tcp)
# against a 16 MB dlm-memserver on 127.0.0.1, which gets killed at the
# end.  TAP.
set -uo pipefail
# shellcheck source=selftests/daemon/lib.sh
. "$(dirname "$0")/lib.sh"

need "$bin/dlm-memserver" "$tests/test-tcp"
echo "TAP version 13"
echo "1..$((1 + 10))"

if ! start_memserver ms 16; then
	notok "memory server starts"
	exit 1
fi
ok "a 16 MB memory server on 127.0.0.1"

subtests 10 "$tests/test-tcp" "$MS_PORT" "$MS_PID"
exit "$fail"
