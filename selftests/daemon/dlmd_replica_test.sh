#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dlmd_replica_test.sh - dlmd --replicas 2: every stored DLM page on both
# memory servers of a pair.  Both servers receive every page; killing one
# of them - with the pages already stored, and again in the middle of a
# run - loses nothing and nothing reads back wrong; killing the second too
# fails that space's stored pages cleanly (SIGBUS, no hang); a killed
# server restarted on its address rejoins its pair (resynchronised while
# another run writes), after which killing the other loses nothing;
# servers advertising far more than the memfile gives them do not size
# dlmd's locked memory; an odd number of servers is refused.  Root and dlmem.ko (the VM).  TAP
# output.
#
# Over tcp on 127.0.0.1 by default.  selftests/verbs/verbs_replica_test.sh
# runs it over RDMA verbs (soft-RoCE) with DLM_REPLICA_TRANSPORT=verbs, the
# servers listening on DLM_REPLICA_LISTEN and dlmd reaching them at
# DLM_REPLICA_CONNECT (bracketed IPv6 link-local addresses).
set -uo pipefail
# shellcheck source=selftests/daemon/lib.sh
. "$(dirname "$0")/lib.sh"
vm_test_start
transport=${DLM_REPLICA_TRANSPORT:-tcp}
listen=${DLM_REPLICA_LISTEN:-127.0.0.1}
connect=${DLM_REPLICA_CONNECT:-127.0.0.1}
MS_LISTEN=$listen:0
MS_EXTRA=(--transport "$transport")
echo "1..11"
echo "# transport $transport: servers on $listen, reached at $connect"

dlmd=
start_pair() {	# start_pair TAG: two memory servers, a memfile, dlmd -r 2
	start_memserver "$1-a" 64 && pa=$MS_PID porta=$MS_PORT &&
		start_memserver "$1-b" 64 && pb=$MS_PID portb=$MS_PORT ||
		return 1
	printf '16\n64 %s:%s\n64 %s:%s\n' "$connect" "$porta" "$connect" "$portb" \
		>"$tmp/$1.memfile"
	start_dlmd "$1.dlmd" "$tmp/$1.memfile" --replicas 2 \
		--transport "$transport" --stats-file "$tmp/$1.json" \
		--stats-interval 1 || return 1
	dlmd=$DLMD_PID
}
# replicas TAG WANT: 0 once dlmd's stats file (written every second) says
# the pair keeps WANT copies, within 5 s; prints what it says last.
replicas() {
	local i r
	for ((i = 0; i < 50; i++)); do
		r=$(sed -n 's/.*"replicas": \([0-9]*\).*/\1/p' "$tmp/$1.json" 2>/dev/null)
		[[ $r == "$2" ]] && break
		sleep 0.1
	done
	echo "${r:-none}"
	[[ $r == "$2" ]]
}
stop_dlmd() {
	kill -TERM "$dlmd" 2>/dev/null
	wait "$dlmd" 2>/dev/null
}
# written NAME PID: bytes_written the memory server logged on SIGUSR1
written() {
	kill -USR1 "$2"
	sleep 0.5
	sed -n 's/.*msg="counters".* bytes_written=\([0-9]*\).*/\1/p' \
		"$tmp/$1.log" | tail -1
}
survey() {	# survey NAME ARGS...: dlm_rw -s in the background
	local name=$1
	shift
	rm -f "$tmp/$name".*
	timeout 300 "$rw" "$@" -s "$tmp/$name" >"$tmp/$name.out" 2>&1 &
	sjob=$!
	for ((i = 0; i < 1200; i++)); do
		[[ -e $tmp/$name.written ]] && return 0
		kill -0 "$sjob" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
survey_result() {	# survey_result NAME: waits, sets rc intact lost wrong
	touch "$tmp/$1.go"
	wait "$sjob"
	rc=$?
	read -r intact lost wrong < <(sed -n \
		's/.*intact=\([0-9]*\) lost=\([0-9]*\) wrong=\([0-9]*\).*/\1 \2 \3/p' \
		"$tmp/$1.out")
}
# survey_all_intact NAME OK-TEXT FAIL-TEXT: all 40 pages back, none lost
survey_all_intact() {
	survey_result "$1"
	if [[ $rc == 0 && $lost == 0 && $wrong == 0 && $intact == 40 ]]; then
		ok "$2"
	else
		notok "$3: exit $rc intact=$intact lost=$lost wrong=$wrong"
		diag "$tmp/$1.out"
	fi
}

if start_pair one && grep -q 'msg="replicating every stored page on two memory servers" pairs=1' \
	"$tmp/one.dlmd.log"; then
	ok "dlmd --replicas 2 registers with one mirrored pair"
else
	notok "dlmd --replicas 2 with a pair"
	exit 1
fi

# Both copies stored: a tcp server counts the bytes written to it; a verbs
# server does not see one-sided WRITEs, so count what reached the link its
# servers listen on (DLM_REPLICA_RX_IF): at least twice the bytes the
# kernel stored (swapouts of 1 MB pages), which one copy never reaches.
rx_if=${DLM_REPLICA_RX_IF:-}
[[ -n $rx_if ]] && rx0=$(cat "/sys/class/net/$rx_if/statistics/rx_bytes")
timeout 300 "$rw" -t 40 -b 4096 -p 1024 >"$tmp/rw1.out" 2>&1
rc=$?
if [[ $transport == tcp ]]; then
	wa=$(written one-a "$pa") wb=$(written one-b "$pb")
	((wa >= 36 << 20 && wb == wa)) && twice=1 || twice=0
	copies="both servers got every page ($wa bytes each)"
else
	wa=$(($(cat "/sys/class/net/$rx_if/statistics/rx_bytes") - rx0))
	wb=$(sed -n 's/.* swapouts=\([0-9]*\) .*/\1/p' "$tmp/rw1.out")
	((${wb:-0} >= 36 && wa >= 2 * (wb << 20))) && twice=1 || twice=0
	copies="$((wa >> 20)) MB reached $rx_if for ${wb:-?} MB stored: two copies"
fi
if [[ $rc == 0 ]] && grep -q '^bad=0 .*swapins=[1-9]' "$tmp/rw1.out" && ((twice)); then
	ok "40 MB through a 4 MB budget read back intact; $copies"
else
	notok "replicated run: exit $rc, written a=$wa b=$wb"
	diag "$tmp/rw1.out"
fi

# Pages stored, then one server killed: all of them still there.
if survey s1 -t 40 -b 4096 -p 1024; then
	kill -KILL "$pa"
	survey_all_intact s1 \
		"server A killed after the writes: all 40 DLM pages intact (read from B)" \
		"after killing A"
else
	notok "survey did not start"
	diag "$tmp/s1.out"
fi
if grep -q 'msg="memory server of a mirrored pair dropped' "$tmp/one.dlmd.log" &&
   kill -0 "$dlmd"; then
	ok "dlmd logs the dropped server and goes on"
else
	notok "dlmd after losing one server of the pair"
	diag "$tmp/one.dlmd.log"
fi

# The survivor alone: then it dies too, and the space fails cleanly.
if survey s2 -t 32 -b 4096 -p 1024; then
	kill -KILL "$pb"
	start=$(date +%s)
	survey_result s2
	secs=$(($(date +%s) - start))
	# The pair's death is logged under the name it connected with
	# (once a use after free printed garbage there).
	pair=$(sed -n 's/.*msg="memory server connected" rank=1 addr=\([^ ]*\) .*/\1/p' \
		"$tmp/one.dlmd.log" | head -1)
	named=0
	for _ in {1..50}; do
		[[ -n $pair ]] && grep -qF "msg=\"memory server dead: its pages fail with EIO, new pages go to the others\" rank=1 addr=$pair " \
			"$tmp/one.dlmd.log" && named=1 && break
		sleep 0.1
	done
	if [[ $rc == 0 && $wrong == 0 ]] && ((lost >= 24 && secs < 60 && named)); then
		ok "both servers gone: $lost stored DLM pages SIGBUS, $intact resident intact, none wrong, ${secs} s; logged as $pair"
	else
		notok "both gone: exit $rc intact=$intact lost=$lost wrong=$wrong in ${secs} s, death logged under the pair's name: $named"
		diag "$tmp/s2.out"
		grep -F 'memory server dead' "$tmp/one.dlmd.log" | diag /dev/stdin
	fi
else
	notok "second survey did not start"
fi
stop_dlmd

# A fresh pair; one server killed in the middle of a run.
if start_pair two; then
	timeout 600 "$rw" -t 48 -b 4096 -p 256 -r 6 >"$tmp/rw2.out" 2>&1 &
	job=$!
	sleep 3
	kill -KILL "$pb"
	wait "$job"
	rc=$?
	if [[ $rc == 0 ]] && grep -q '^bad=0 ' "$tmp/rw2.out" &&
	   grep -q 'msg="memory server of a mirrored pair dropped' "$tmp/two.dlmd.log"; then
		ok "server B killed mid-run (48 MB, 256 KB pages, 6 rounds): every word read back"
	else
		notok "server killed mid-run: exit $rc"
		diag "$tmp/rw2.out"
	fi
	stop_dlmd
else
	notok "second pair did not start"
fi

# A killed server restarted on its address rejoins the pair: everything
# its pair holds is copied to it while another run writes, then the pair
# is killed and both runs read every word back from the restarted one.
if start_pair three && survey s3 -t 40 -b 4096 -p 1024; then
	kill -KILL "$pa"
	wait_log "$tmp/three.dlmd.log" 'mirrored pair dropped' 10
	one=$(replicas three 1)
	timeout 600 "$rw" -t 16 -b 2048 -p 256 -r 40 >"$tmp/rw3.out" 2>&1 &
	job=$!
	sleep 1
	MS_LISTEN=$listen:$porta start_memserver three-a2 64 && pa=$MS_PID
	wait_log "$tmp/three.dlmd.log" 'rejoined: replicated again' 60
	two=$(replicas three 2)
	line=$(grep 'rejoined: replicated again' "$tmp/three.dlmd.log")
	if [[ -n $line && $one == 1 && $two == 2 ]] &&
	   grep -q 'is back: copying' "$tmp/three.dlmd.log"; then
		copied=${line##*copied_bytes=}
		ok "server A restarted on its port rejoined while a run wrote (${line##*ms=} ms to copy $((${copied%% *} >> 20)) MB written of 64; stats: replicas 1, then 2)"
	else
		notok "server A restarted: no rejoin within 60 s, or stats not replicas 1 then 2 ($one, $two)"
		diag "$tmp/three.dlmd.log"
	fi
	kill -KILL "$pb"
	survey_all_intact s3 \
		"then server B killed: all 40 DLM pages stored before A's restart intact (read from the new A)" \
		"after the rejoin and killing B"
	wait "$job"
	rc=$?
	if [[ $rc == 0 ]] && grep -q '^bad=0 ' "$tmp/rw3.out"; then
		ok "the run that wrote during the copy read every word back after B was killed"
	else
		notok "run across the rejoin: exit $rc"
		diag "$tmp/rw3.out"
	fi
	stop_dlmd
else
	notok "third pair or its survey did not start"
	skip "then server B killed"
	skip "the run that wrote during the copy"
fi

# A pair whose servers advertise far more than the memfile gives it
# (64 TiB each, mapped MAP_NORESERVE): the resync bitmaps are sized by
# what the pair is used for, not by the servers' word.  dlmd locks its
# memory (mlockall); before 2026-12-02 these bitmaps took 128 MB of it
# here (a byte per MB each, two of them), 2 GB with 1 PiB servers.
# locked_with MB: dlmd's VmLck (kB) with a pair of MB-sized servers.
locked_with() {
	local a b pa='' pb='' lck=0
	if start_memserver "lck$1-a" "$1" && a=$MS_PORT pa=$MS_PID &&
	   start_memserver "lck$1-b" "$1" && b=$MS_PORT pb=$MS_PID &&
	   printf '16\n64 %s:%s\n64 %s:%s\n' "$connect" "$a" "$connect" \
		"$b" >"$tmp/lck$1.memfile" &&
	   start_dlmd "lck$1.dlmd" "$tmp/lck$1.memfile" --replicas 2 \
		--transport tcp; then
		dlmd=$DLMD_PID
		lck=$(awk '/^VmLck/ {print $2}' "/proc/$dlmd/status")
		grep -q "will not rejoin" "$tmp/lck$1.dlmd.log" && lck=999999999
		# Nothing to measure: mlockall() failed (no CAP_IPC_LOCK).
		grep -q "cannot lock dlmd's memory" "$tmp/lck$1.dlmd.log" && lck=-1
		stop_dlmd
	fi
	kill -TERM $pa $pb 2>/dev/null
	echo "${lck:-0}"
	((lck > 0 || lck == -1))
}
if [[ $transport != tcp ]]; then
	skip "a pair of 64 TiB servers: tcp only (a verbs server registers all its memory)"
elif with_asan "$bin/dlmd"; then
	# AddressSanitizer turns mlockall() into a no-op: VmLck stays 0.
	skip "a pair of 64 TiB servers: dlmd is built with AddressSanitizer, which ignores mlockall"
elif base=$(locked_with 64); ((base == -1)); then
	skip "a pair of 64 TiB servers: dlmd could not lock its memory (mlockall), so VmLck measures nothing"
elif huge=$(locked_with $((1 << 26))) && ((base > 0 && huge > 0 && huge < base + 16384)); then
	ok "a pair of servers advertising 64 TiB each: dlmd locks $((huge >> 10)) MB, $((base >> 10)) MB with 64 MB servers"
else
	notok "a pair of servers advertising 64 TiB each: dlmd locks ${huge:-?} kB, ${base:-?} kB with 64 MB servers"
fi

start_memserver odd 16 && printf '8\n16 %s:%s\n' "$connect" "$MS_PORT" >"$tmp/odd.memfile"
"$bin/dlmd" -f "$tmp/odd.memfile" --replicas 2 --transport "$transport" >"$tmp/odd.out" 2>&1
rc=$?
if [[ $rc == 2 ]] && grep -q "give an even number" "$tmp/odd.out"; then
	ok "--replicas 2 with one server: exit 2, says to pair them"
else
	notok "--replicas 2 with one server: exit $rc"
	diag "$tmp/odd.out"
fi
exit $fail
