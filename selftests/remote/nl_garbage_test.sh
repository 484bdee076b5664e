#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# nl_garbage_test.sh - the generic netlink family "dlm" refuses garbage,
# unprivileged senders and messages from sockets that are not the daemon
# (nl_garbage.py).  Needs root, dlmem.ko loaded, python3.  TAP output.
set -uo pipefail
if [[ $(id -u) != 0 || ! -c /dev/dlm ]] || ! command -v python3 >/dev/null; then
	echo "TAP version 13"
	echo "1..0 # SKIP needs root, dlmem.ko loaded and python3"
	exit 4
fi
exec python3 -S "$(dirname "$0")/nl_garbage.py"
