#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-memserver.sh - dlm-memserver on 127.0.0.1: command line, the wire
# protocol (memserver-client: data, bounds, malformed headers, two
# clients), port in use, SIGUSR1 counters, the CPU policy (--sched), the
# connection limit (--max-clients), clean exit on SIGTERM with a client
# connected.  TAP.
set -uo pipefail
# shellcheck source=selftests/daemon/lib.sh
. "$(dirname "$0")/lib.sh"

need "$bin/dlm-memserver" "$tests/memserver-client"
ms=$bin/dlm-memserver
echo "TAP version 13"
echo "1..$((12 + 21))"

# served_policies PID: policies (lib.sh) of server PID once a connection
# thread has joined its main thread (up to 5 s), in $pol.
served_policies() {
	local i
	for ((i = 0; i < 50; i++)); do
		pol=$(policies "$1")
		[[ $pol == *"threads="[2-9]* ]] && return
		sleep 0.1
	done
}

out=$("$ms" --help) && [[ $out == *"Usage: dlm-memserver --listen ADDR:PORT --size MB"* ]] &&
	ok "--help prints the usage and exits 0" || notok "--help"
out=$("$ms" --version) && [[ $out == "dlm-memserver "* ]] &&
	ok "--version" || notok "--version: $out"

bad=0
for args in "" "--size 8" "--listen 127.0.0.1:0" \
	"--listen 127.0.0.1:0 --size 0" "--listen 127.0.0.1:0 --size 12abc" \
	"--listen 127.0.0.1 --size 8" "--listen 127.0.0.1:99999 --size 8" \
	"--listen 127.0.0.1:0 --size 8 --log-level loud" \
	"--listen 127.0.0.1:0 --size 8 --transport rdma" \
	"--listen 127.0.0.1:0 --size 8 --sched fifo" \
	"--listen 127.0.0.1:0 --size 8 --max-clients 0" \
	"--listen 127.0.0.1:0 --size 8 --max-clients 65537" \
	"--listen 127.0.0.1:0 --size 8 --max-clients 2x" "--bogus"; do
	# shellcheck disable=SC2086 # word splitting wanted
	"$ms" $args >/dev/null 2>"$tmp/usage.err"
	rc=$?
	if ((rc != 2)) || [[ ! -s $tmp/usage.err ]]; then
		echo "# '$args': exit $rc"
		diag "$tmp/usage.err"
		bad=1
	fi
done
((bad == 0)) && ok "usage errors exit 2 with a message" ||
	notok "usage errors exit 2 with a message"

if ! start_memserver ms 64 wait; then
	notok "dlm-memserver starts on 127.0.0.1:0"
	exit 1
fi
ok "dlm-memserver listens on 127.0.0.1:$MS_PORT (64 MB)"
pid=$MS_PID port=$MS_PORT

subtests 18 "$tests/memserver-client" "$port" 64

if kill -0 "$pid" 2>/dev/null && grep -q 'msg="malformed header' "$tmp/ms.log"; then
	ok "server alive after the protocol tests; malformed headers logged"
else
	notok "server alive after the protocol tests; malformed headers logged"
	diag "$tmp/ms.log"
fi

"$ms" --listen "127.0.0.1:$port" --size 8 2>"$tmp/busy.err"
rc=$?
if ((rc == 1)) && grep -q "cannot listen on 127.0.0.1:$port: Address already in use" "$tmp/busy.err"; then
	ok "a second server on the same port: exit 1, says why"
else
	notok "a second server on the same port: exit $rc"
	diag "$tmp/busy.err"
fi

kill -USR1 "$pid"
for ((i = 0; i < 50; i++)); do
	grep -Eq 'msg="counters" .*bytes_written=[1-9]' "$tmp/ms.log" && break
	sleep 0.1
done
if grep -Eq 'msg="counters" .*bytes_written=[1-9]' "$tmp/ms.log"; then
	ok "SIGUSR1 logs the counters"
else
	notok "SIGUSR1 logs the counters"
	diag "$tmp/ms.log"
fi

# A client still connected must not keep SIGTERM from ending the server.
exec 3<>"/dev/tcp/127.0.0.1/$port"
sleep 0.1
# Its thread as well as the main one: SCHED_BATCH (--sched batch, default).
served_policies "$pid"
if [[ $pol == "3 threads="[2-9]* ]] &&
   grep -q 'msg="listening" .* sched=batch ' "$tmp/ms.log"; then
	ok "every thread runs SCHED_BATCH by default ($pol), logged"
else
	notok "every thread runs SCHED_BATCH by default: policies $pol"
	diag "$tmp/ms.log"
fi
kill -TERM "$pid"
rc=124
for ((i = 0; i < 50; i++)); do
	if ! kill -0 "$pid" 2>/dev/null; then
		wait "$pid"
		rc=$?
		break
	fi
	sleep 0.1
done
exec 3>&-
if ((rc == 0)) && grep -q 'msg="signal received, exiting" signal=SIGTERM' "$tmp/ms.log"; then
	ok "SIGTERM with a client connected: exit 0 within 5 s"
else
	notok "SIGTERM with a client connected: exit status $rc"
	diag "$tmp/ms.log"
fi
MS_EXTRA=(--sched normal)
if start_memserver normal 8 wait; then
	pol=$(policies "$MS_PID")
	kill "$MS_PID"
	wait "$MS_PID"
	[[ $pol == "0 threads=1" ]] && ok "--sched normal: SCHED_OTHER" ||
		notok "--sched normal: policies $pol"
else
	notok "--sched normal: the server starts"
fi
MS_EXTRA=(--sched idle)
if start_memserver idle 8 wait; then
	exec 3<>"/dev/tcp/127.0.0.1/$MS_PORT"
	served_policies "$MS_PID"	# its connection thread too
	# A thread put under SCHED_BATCH by someone else before any lift
	# is not the guard's to move back: six looks later it is still
	# there, beside the connection thread under SCHED_IDLE.
	polb=
	if [[ $(id -u) == 0 ]] && chrt -b -p 0 "$MS_PID"; then
		sleep 0.3
		polb=$(policies "$MS_PID")
	fi
	exec 3>&-
	kill "$MS_PID"
	wait "$MS_PID"
	# Privileged (CI, the VM): the starvation guard under SCHED_BATCH
	# beside them; otherwise none, and the log says why.
	guard=" guard=3"
	[[ $(id -u) == 0 ]] || guard=
	[[ $pol == "5 threads="[2-9]"$guard" ]] &&
		grep -q 'msg="listening" .* sched=idle ' "$tmp/idle.log" &&
		ok "--sched idle: every thread SCHED_IDLE but the guard ($pol), logged" ||
		notok "--sched idle: policies $pol"
	if [[ $(id -u) != 0 ]]; then
		skip "--sched idle: a thread moved to SCHED_BATCH by hand (needs root)"
	elif [[ $polb == "3 5 threads=2 guard=3" ]]; then
		ok "--sched idle: the guard leaves a thread moved to SCHED_BATCH by hand alone ($polb)"
	else
		notok "--sched idle: the guard moved a thread put under SCHED_BATCH by hand ($polb)"
	fi
else
	notok "--sched idle: the server starts"
	notok "--sched idle: the server starts (thread moved by hand)"
fi
# A server that may not leave SCHED_IDLE again cannot lift a starved
# thread: it runs without the guard and says what would give it one.
if [[ $(id -u) == 0 ]] && command -v setpriv >/dev/null; then
	setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
		"$ms" --listen 127.0.0.1:0 --size 1 --sched idle 2>"$tmp/unpriv.log" &
	upid=$!
	pids+=("$upid")
	wait_log "$tmp/unpriv.log" 'msg="listening"' 10
	pol=$(policies "$upid")
	kill "$upid"
	wait "$upid" 2>/dev/null
	[[ $pol == "5 threads=1" ]] &&
		grep -q 'runs without its starvation guard: leaving SCHED_IDLE needs CAP_SYS_NICE or RLIMIT_NICE' "$tmp/unpriv.log" &&
		ok "--sched idle unprivileged: no guard ($pol), the log names CAP_SYS_NICE and RLIMIT_NICE" ||
		{ notok "--sched idle unprivileged: policies $pol"; diag "$tmp/unpriv.log"; }
else
	skip "--sched idle unprivileged: needs root and setpriv to drop to nobody"
fi
# --max-clients 2: two idle connections are served (left open); a third
# is closed at once, unread, and logged; once one of the two closes, a
# new one is served again.  Idle connections cannot take every thread.
MS_EXTRA=(--max-clients 2)
if start_memserver limit 8 wait; then
	out=$(python3 -S - "$MS_PORT" <<'PY'
import socket, sys, time
port = int(sys.argv[1])
def conn():
    s = socket.create_connection(('127.0.0.1', port))
    s.settimeout(1.0)
    return s
def state(s):          # 'closed' if the server closed it, else 'open'
    try:
        return 'closed' if s.recv(1) == b'' else 'data'
    except socket.timeout:
        return 'open'
    except ConnectionResetError:
        return 'closed'
a, b = conn(), conn()
time.sleep(0.3)
c = conn()
r = [state(a), state(b), state(c)]
a.close()
time.sleep(1.0)       # the server sees it go and ends its thread
d = conn()
r.append(state(d))
print(' '.join(r))
PY
)
	kill -USR1 "$MS_PID"
	wait_log "$tmp/limit.log" 'msg="counters".*conns_refused=1' 5
	kill "$MS_PID"
	wait "$MS_PID"
	if [[ $out == "open open closed open" ]] &&
	   grep -q 'refused a connection: as many clients as --max-clients.*max_clients=2' "$tmp/limit.log" &&
	   grep -q 'conns_refused=1' "$tmp/limit.log"; then
		ok "--max-clients 2: a third connection is closed and logged, a later one served ($out)"
	else
		notok "--max-clients 2: connections $out (want open open closed open)"
		diag "$tmp/limit.log"
	fi
else
	notok "--max-clients 2: the server starts"
fi
if grep -Eq 'level=info prog=dlm-memserver msg="exit" .*write=[1-9]' "$tmp/ms.log" &&
   ! grep -Eq 'level=(error)' "$tmp/ms.log"; then
	ok "final counters logged, no errors in the log"
else
	notok "final counters logged, no errors in the log"
	diag "$tmp/ms.log"
fi
exit "$fail"
