#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# soak.sh [MINUTES] - a bounded mixed workload with integrity checks, run
# on demand (make soak; not part of make check).  MINUTES (default 30) of
# cycles; each cycle starts two dlm-memservers as a mirrored pair and
# dlmd --replicas 2, then runs at once, in loops until the cycle ends:
#
#   rw-threads  dlm_rw, 24 MB through 2 MB, 256 KB pages, random order,
#               3 threads, clock eviction
#   rw-arr      dlm_rw, 16 MB through 1 MB, 1 MB pages, ARR eviction
#   preload     preload_prog under libdlm-preload.so: malloc/calloc/
#               realloc/free, mmap/mremap/munmap, 4 threads, fork, a
#               32 MB working set through 8 MB
#   fig2        the Fig. 2 program (dlm arrays, 32 MB through 8 MB)
#   fig3        matvec (dlm_alloc/dlm_free), 32 MB through 8 MB
#
# and, a third of the way in, kills one memory server of the pair
# (alternately A and B) and restarts it on its address; dlmd must copy what
# its pair holds to it and replicate again ("rejoined" in its log), and
# two thirds of the way in the other server is killed, so everything from
# then on is read from the restarted one: replication and the rejoin must
# lose nothing.  Every run checks
# its data word by word (or its exact checksum); any failure, a hang past
# RUN_TIMEOUT, or a WARN/BUG/oops in dmesg (vm-run checks) fails the soak.
# Between cycles dlmd stops and the memory servers are restarted.
#
# Run as root in the VM:  vm-images/vm-run --timeout 3600 -- selftests/soak/soak.sh 30
# Last line: "soak: PASS ..." or "soak: FAIL ...", with the counts.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export O=${DLM_BIN:-$here/../../build}
# shellcheck source=selftests/daemon/lib.sh
source "$here/../daemon/lib.sh"
minutes=${1:-30}
cycle_s=${SOAK_CYCLE_S:-180}
run_timeout=${RUN_TIMEOUT:-600}
rw=$build/selftests/remote/dlm_rw
pre=$build/lib/libdlm-preload.so
prog=$build/selftests/libdlm/preload_prog

say() { echo "soak: $(date +%T) $*"; }
if [[ $(id -u) == 0 && ! -d /sys/module/dlmem && -n ${DLM_VM:-} ]]; then
	insmod "${DLM_KO:-$top/kmod/dlmem.ko}" || exit 2
fi
if [[ $(id -u) != 0 || ! -c /dev/dlm ]]; then
	echo "soak: needs root and dlmem.ko loaded (vm-images/vm-run -- $0)" >&2
	exit 2
fi
need "$bin/dlmd" "$bin/dlm-memserver" "$rw" "$pre" "$prog" \
	"$bin/matvec" "$bin/matvec-fig2"

end=$(($(date +%s) + minutes * 60))
declare -A runs fails
cycles=0 kills=0 failed=0

# loop NAME CMD...: run CMD again and again until $stop exists; count.
loop() {
	local name=$1 i=0 rc
	shift
	while [[ ! -e $tmp/stop ]]; do
		i=$((i + 1))
		timeout "$run_timeout" "$@" >"$tmp/$name.$i.out" 2>&1
		rc=$?
		echo "$rc" >>"$tmp/$name.rcs"
		if ((rc != 0)); then
			cp "$tmp/$name.$i.out" "$tmp/$name.fail.$i"
		fi
		rm -f "$tmp/$name.$i.out"
	done
}

want_mv="checksum=3996001000000"	# N=2000: (N(N-1)/2)^2
mvcheck() {	# mvcheck CMD...: exit 0 only with the exact checksum
	"$@" >"$tmp/mv.$$" 2>&1 && grep -q "$want_mv" "$tmp/mv.$$"
	local rc=$?
	rm -f "$tmp/mv.$$"
	return $rc
}
export -f mvcheck
export tmp want_mv

while (($(date +%s) + 60 < end)); do
	cycles=$((cycles + 1))
	rejoin_failed=0 restarted=
	rm -f "$tmp/stop" "$tmp"/*.rcs
	start_memserver "a$cycles" 384 && pa=$MS_PID porta=$MS_PORT &&
		start_memserver "b$cycles" 384 && pb=$MS_PID portb=$MS_PORT || {
		say "cycle $cycles: memory servers did not start"
		failed=1
		break
	}
	printf '96\n384 127.0.0.1:%s\n384 127.0.0.1:%s\n' "$porta" "$portb" \
		>"$tmp/dlmd.memfile"
	printf '8\n48 127.0.0.1:%s\n' "$porta" >"$tmp/prog.memfile"
	"$bin/dlmd" -f "$tmp/dlmd.memfile" --replicas 2 --log-level warn \
		2>"$tmp/dlmd.$cycles.log" &
	dlmd=$!
	for ((i = 0; i < 100; i++)); do
		[[ $(cat /sys/class/misc/dlm/daemon) != 0 ]] && break
		sleep 0.1
	done
	say "cycle $cycles: pair on ports $porta+$portb, dlmd $dlmd"

	jobs_=()
	loop rw-threads "$rw" -t 24 -b 2048 -p 256 -a random -j 3 -P clock & jobs_+=($!)
	loop rw-arr "$rw" -t 16 -b 1024 -p 1024 -P arr & jobs_+=($!)
	loop preload env LD_PRELOAD="$pre" DLM_MEMFILE="$tmp/prog.memfile" \
		DLM_PRELOAD_MIN=1M "$prog" 32 & jobs_+=($!)
	loop fig2 env DLM_MEMFILE="$tmp/prog.memfile" bash -c \
		"mvcheck $bin/matvec-fig2" & jobs_+=($!)
	loop fig3 bash -c "mvcheck $bin/matvec 2000 -- -f $tmp/prog.memfile" & jobs_+=($!)

	sleep $((cycle_s / 3))
	if ((cycles % 2)); then
		victim=$pa side=A port=$porta other=$pb
	else
		victim=$pb side=B port=$portb other=$pa
	fi
	kill -KILL "$victim"
	kills=$((kills + 1))
	say "cycle $cycles: killed memory server $side (pid $victim)"
	sleep 2
	t0=$(date +%s)
	MS_LISTEN=127.0.0.1:$port start_memserver "$side$cycles-2" 384 &&
		restarted=$MS_PID || restarted=
	if wait_log "$tmp/dlmd.$cycles.log" 'rejoined: replicated again' \
		$((cycle_s / 2)); then
		line=$(grep 'rejoined: replicated again' "$tmp/dlmd.$cycles.log")
		copied=${line##*copied_bytes=}
		say "cycle $cycles: memory server $side restarted (pid $restarted) and rejoined in $(($(date +%s) - t0)) s ($((${copied%% *} >> 20)) MB copied)"
		left=$((t0 + cycle_s / 3 - $(date +%s)))
		((left > 0)) && sleep "$left"
		kill -KILL "$other"
		kills=$((kills + 1))
		say "cycle $cycles: killed the other memory server (pid $other): the restarted one serves all"
	else
		say "cycle $cycles: memory server $side restarted (pid ${restarted:-none}) did not rejoin within $((cycle_s / 2)) s"
		rejoin_failed=1
	fi
	sleep $((cycle_s / 3))
	touch "$tmp/stop"
	wait "${jobs_[@]}"
	kill -TERM "$dlmd"
	wait "$dlmd"
	dlmd_rc=$?
	kill -KILL "$pa" "$pb" ${restarted:+"$restarted"} 2>/dev/null

	line="cycle $cycles:"
	for name in rw-threads rw-arr preload fig2 fig3; do
		n=$(wc -l <"$tmp/$name.rcs" 2>/dev/null || echo 0)
		f=$(grep -cv '^0$' "$tmp/$name.rcs" 2>/dev/null)
		runs[$name]=$((${runs[$name]:-0} + n))
		fails[$name]=$((${fails[$name]:-0} + ${f:-0}))
		line+=" $name $n runs/${f:-0} failed;"
		((${f:-0} == 0)) || failed=1
	done
	((dlmd_rc == 0)) || { failed=1; line+=" dlmd exited $dlmd_rc;"; }
	grep -q 'mirrored pair dropped' "$tmp/dlmd.$cycles.log" ||
		{ failed=1; line+=" dlmd did not log the dropped server;"; }
	if ((rejoin_failed)); then
		failed=1
		line+=" the restarted server did not rejoin;"
	fi
	say "$line"
	for f in "$tmp"/*.fail.*; do
		[[ -e $f ]] || continue
		say "failure output $f:"
		sed 's/^/    /' "$f" | tail -20
		rm -f "$f"
	done
	((failed)) && break
done

summary="$cycles cycles, $kills memory servers killed"
for name in rw-threads rw-arr preload fig2 fig3; do
	summary+=", $name ${runs[$name]:-0} runs (${fails[$name]:-0} failed)"
done
if ((failed || cycles == 0)); then
	say "FAIL"
	echo "soak: FAIL: $summary"
	exit 1
fi
echo "soak: PASS: $summary, in $minutes minutes"
