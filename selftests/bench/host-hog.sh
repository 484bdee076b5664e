#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# host-hog.sh LOG - on the host, beside "make bench-mpi-pairs >LOG 2>&1":
# keep one host CPU busy (a shell loop) during the even rounds of mpi.sh's
# pairs and leave it idle during the odd ones, so that one run shows side
# by side what other work on the host does to the Himeno bar.  Follows
# LOG's "round N of M" lines; stops, and stops the loop, when LOG gets a
# line "exit=..." (append "; echo exit=$? >>LOG" to the make command) or
# when make's own vm-run is gone.  Logs each switch to LOG.hog.
#
#   (make bench-mpi-pairs PAIRS=8 >/tmp/p.log 2>&1; echo exit=$? >>/tmp/p.log) &
#   selftests/bench/host-hog.sh /tmp/p.log
set -uo pipefail

usage() { sed -n '4,13p' "$0" | sed 's/^# \{0,1\}//'; }
case ${1:-} in -h | --help) usage; exit 0 ;; esac
(($# == 1)) || { usage >&2; exit 2; }
log=$1
hog=
last=0
stop_hog() {
	[[ -z $hog ]] || kill "$hog" 2>/dev/null
	hog=
}
trap stop_hog EXIT
trap 'exit 130' INT TERM

seen_vm=0
while ! grep -qa '^exit=' "$log" 2>/dev/null; do
	if pgrep -f 'vm-images/vm-run' >/dev/null; then
		seen_vm=1
	elif ((seen_vm)); then
		break	# the run ended without an exit= line
	fi
	r=$(grep -ao 'round [0-9]* of' "$log" 2>/dev/null | tail -n 1 | cut -d' ' -f2)
	if [[ -n $r && $r != "$last" ]]; then
		last=$r
		if ((r % 2 == 0)); then
			[[ -n $hog ]] || { bash -c 'while :; do :; done' & hog=$!; }
		else
			stop_hog
		fi
		busy=no
		[[ -z $hog ]] || busy=yes
		echo "$(date +%T) round $r host CPU busy: $busy" >>"$log.hog"
	fi
	sleep 0.3
done
