#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dlmd_restart_test.sh - what a program's live DLM space sees when dlmd
# crashes and a new dlmd registers while the memory servers still hold its
# pages.  DLM does not re-attach a restarted daemon to old spaces (the
# daemon's placement of pages on servers died with it); it fails them
# cleanly: the DLM pages still resident read back intact, every other one
# gives SIGBUS at once (no hang, no wrong data), and new spaces work with
# the new daemon.  See Documentation/design.rst, "Daemon restart".
# Root and dlmem.ko (the VM).  TAP output.
set -uo pipefail
# shellcheck source=selftests/daemon/lib.sh
. "$(dirname "$0")/lib.sh"
vm_test_start
echo "1..6"

start_memserver ms 64 wait && port=$MS_PORT ||
	{ echo "Bail out! dlm-memserver did not start"; exit 1; }
printf '16\n64 127.0.0.1:%s\n' "$port" >"$tmp/memfile"
start_dlmd first "$tmp/memfile" && dlmd=$DLMD_PID ||
	{ echo "Bail out! dlmd did not register"; exit 1; }

# 32 MB written through a 4 MB budget: 28 or more DLM pages on the server.
timeout 300 "$rw" -t 32 -b 4096 -p 1024 -s "$tmp/survey" >"$tmp/survey.out" 2>&1 &
job=$!
for ((i = 0; i < 600; i++)); do
	[[ -e $tmp/survey.written ]] && break
	sleep 0.1
done
kill -KILL "$dlmd"
wait "$dlmd" 2>/dev/null
if start_dlmd second "$tmp/memfile"; then
	dlmd=$DLMD_PID
	ok "dlmd killed with a space live; a new dlmd registers (memory server still up)"
else
	notok "a new dlmd registers after the crash"
fi

start=$(date +%s)
touch "$tmp/survey.go"
wait "$job"
rc=$?
secs=$(($(date +%s) - start))
read -r intact lost wrong < <(sed -n 's/.*intact=\([0-9]*\) lost=\([0-9]*\) wrong=\([0-9]*\).*/\1 \2 \3/p' \
	"$tmp/survey.out")
if [[ $rc == 0 && ${wrong:-1} == 0 ]] && ((${intact:-0} >= 1 && ${lost:-0} >= 28)); then
	ok "the old space after the restart: $intact resident DLM pages intact, $lost others SIGBUS, none wrong"
else
	notok "the old space after the restart: exit $rc, intact=${intact:-?} lost=${lost:-?} wrong=${wrong:-?}"
	diag "$tmp/survey.out"
fi
if ((secs < 60)); then
	ok "it read the whole space in ${secs} s (bounded: no page waited for the old daemon)"
else
	notok "reading the old space took ${secs} s"
fi
# The kernel keeps the old space's requests from the new daemon (which
# never knew it) instead of letting it refuse them one by one.
if grep -q 'unknown SPACE' "$tmp/second.log"; then
	notok "the new dlmd was sent requests about the old space: $(grep -c 'unknown SPACE' "$tmp/second.log") logged"
else
	ok "the new dlmd was sent no request about the old space"
fi

timeout 300 "$rw" -t 32 -b 4096 -p 1024 >"$tmp/new.out" 2>&1
rc=$?
if [[ $rc == 0 ]] && grep -q '^bad=0 .*swapins=[1-9]' "$tmp/new.out"; then
	ok "a new space works with the new dlmd and the same memory server"
else
	notok "a new space with the new dlmd (exit $rc)"
	diag "$tmp/new.out"
fi
kill -TERM "$dlmd"
wait "$dlmd"
rc=$?
if [[ $rc == 0 ]]; then
	ok "the new dlmd exits 0 on SIGTERM"
else
	notok "the new dlmd exits $rc on SIGTERM"
	diag "$tmp/second.log"
fi
exit $fail
