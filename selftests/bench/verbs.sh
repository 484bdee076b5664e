#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# verbs.sh [ARRAY_MB] [ITERATIONS] [PERCENT...] - the verbs transport
# against its limit and against the other transports, in one VM run:
#
#   limit        perftest ib_read_bw and ib_write_bw, 1 MB messages,
#                between the two soft-RoCE devices of selftests/verbs/rxe.sh
#                (rxe0 on va, rxe1 on vb, a veth pair, MTU 9000)
#   transport    xfer_bench: 1 MB transfers through dlmd's own transport
#                code, no kernel in the way: verbs over rxe, tcp over
#                127.0.0.1
#   triad        STREAM-style triad (stream, 3 x ARRAY_MB, default 32, 1 MB
#                DLM pages) through /dev/dlm at local ratios PERCENT
#                (default 25 10) over verbs (dlm-memserver --transport
#                verbs on rxe1), tcp (dlm-memservers on 127.0.0.1) and MPI
#                (mpirun -np 3 dlmd, Open MPI and MPICH), beside all-local
#   server CPU   user+system CPU time of the memory servers during the
#                triad runs, per swapped-in page (from /proc)
#
# Run as root in the VM:  vm-images/vm-run -- selftests/bench/verbs.sh
# (make bench-verbs).  Writes OUT/verbs.csv, OUT/verbs.txt, OUT/verbs.png
# (OUT: $DLM_BENCH_OUT, default build/results/bench).  Progress on stderr.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
bin=${DLM_BUILD:-$top/build}
out=${DLM_BENCH_OUT:-$bin/results/bench}
mb=${1:-32}
iters=${2:-3}
shift $(($# >= 2 ? 2 : $#))
pcts=("$@")
((${#pcts[@]})) || pcts=(25 10)
transports=${TRANSPORTS:-verbs tcp openmpi mpich}
per_run_timeout=${RUN_TIMEOUT:-600}
perf_iters=${PERF_ITERS:-300}
stream=$bin/bench/stream
tmp=$(mktemp -d)
pids=()
job=
rxe_up=		# soft-RoCE set up by this run: torn down by cleanup
# shellcheck source=selftests/verbs/rxe.sh
. "$top/selftests/verbs/rxe.sh"

say() { echo "verbs.sh: $*" >&2; }
# shellcheck source=selftests/bench/lib.sh
. "$top/selftests/bench/lib.sh"

cleanup() {
	set +e
	stop_all
	[[ -n $rxe_up ]] && rxe_teardown
}
trap cleanup EXIT
check_args

need_root
if [[ $("$bin/bin/dlmd" --version) != *"transports: tcp verbs"* ]]; then
	say "dlmd was built without rdma-core: make deps; make"
	exit 2
fi
mkdir -p "$out"
csv=$out/verbs.csv
echo "kind,transport,local_pct,value,unit,extra" >"$csv"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rxe_up=1
rxe_setup || { say "cannot set up soft-RoCE"; exit 1; }
load_dlmem

# ---- the link's limit: perftest -----------------------------------------------
# perf TOOL: TOOL's 1 MB average MB/s (MB = 2^20 as perftest reports).
perf() {
	local tool=$1 v
	say "$tool, 1 MB x $perf_iters, rxe0 -> rxe1 ..."
	timeout 300 "$tool" -d rxe1 -x 0 -s 1048576 -n "$perf_iters" -F \
		>"$tmp/$tool.srv" 2>&1 &
	local srv=$!
	sleep 2
	timeout 300 "$tool" -d rxe0 -x 0 -s 1048576 -n "$perf_iters" -F \
		127.0.0.1 >"$tmp/$tool.cli" 2>&1 || true
	wait "$srv" || true
	# The side that measures prints "1048576 ITERS PEAK AVERAGE RATE".
	v=$(awk '$1 == 1048576 && $4 > 0 { print $4 }' "$tmp/$tool.cli" \
		"$tmp/$tool.srv" | head -1)
	if [[ -z $v ]]; then
		say "  $tool gave no figure:"
		tail -3 "$tmp/$tool.cli" >&2
		echo "perftest,$tool,100,,MiB/s,failed" >>"$csv"
		return
	fi
	say "  $v MiB/s"
	echo "perftest,$tool,100,$v,MiB/s," >>"$csv"
}
perf ib_read_bw
perf ib_write_bw

# ---- dlmd's transports without the kernel: xfer_bench ---------------------------
"$bin/bin/dlm-memserver" --transport verbs --listen "[$LB%vb]:7401" \
	--size 512 --log-level warn 2>"$tmp/xv.log" &
pids+=($!)
"$bin/bin/dlm-memserver" --listen 127.0.0.1:7402 --size 512 \
	--log-level warn 2>"$tmp/xt.log" &
pids+=($!)
sleep 2
for x in "verbs [$LB%va]:7401" "tcp 127.0.0.1:7402"; do
	read -r t addr <<<"$x"
	say "xfer_bench -t $t, 1 MB x 256, 2 in flight ..."
	line=$(timeout 300 "$bin/bench/xfer_bench" -t "$t" -n 256 -d 2 "$addr" 2>&1) || true
	say "  $line"
	if [[ $line == *"intact=1"* ]]; then
		echo "xfer_read,$t,100,$(sed -n 's/.*read_mbs=\([0-9.]*\).*/\1/p' <<<"$line"),MB/s," >>"$csv"
		echo "xfer_write,$t,100,$(sed -n 's/.*write_mbs=\([0-9.]*\).*/\1/p' <<<"$line"),MB/s," >>"$csv"
	else
		echo "xfer_read,$t,100,,MB/s,failed" >>"$csv"
	fi
done
stop_servers	# the memory servers (no dlmd yet)

# ---- triad through /dev/dlm ---------------------------------------------------
srvmb=$((3 * mb + 8))

# cpu_ticks PID...: user+system clock ticks of the processes.
cpu_ticks() {
	local p s=0
	for p in "$@"; do
		[[ -r /proc/$p/stat ]] || continue
		s=$((s + $(awk '{ print $14 + $15 }' "/proc/$p/stat")))
	done
	echo "$s"
}

# start_daemon TRANSPORT: dlmd and its two memory servers.  SERVERS: the
# pids whose CPU time counts as the memory servers'.
start_daemon() {
	local tr=$1 i
	rm -f "$tmp/dlmd.log"
	SERVERS=()
	case $tr in
	verbs|tcp)
		for i in 1 2; do
			if [[ $tr == verbs ]]; then
				"$bin/bin/dlm-memserver" --transport verbs \
					--listen "[$LB%vb]:741$i" --size "$srvmb" \
					--log-level warn 2>>"$tmp/ms.log" &
			else
				"$bin/bin/dlm-memserver" --listen "127.0.0.1:741$i" \
					--size "$srvmb" --log-level warn \
					2>>"$tmp/ms.log" &
			fi
			pids+=($!)
			SERVERS+=($!)
		done
		if [[ $tr == verbs ]]; then
			printf '%s\n%s [%s%%va]:7411\n%s [%s%%va]:7412\n' "$srvmb" \
				"$srvmb" "$LB" "$srvmb" "$LB" >"$tmp/dlmd.mem"
		else
			printf '%s\n%s 127.0.0.1:7411\n%s 127.0.0.1:7412\n' \
				"$srvmb" "$srvmb" "$srvmb" >"$tmp/dlmd.mem"
		fi
		sleep 2
		"$bin/bin/dlmd" --transport "$tr" -f "$tmp/dlmd.mem" \
			2>"$tmp/dlmd.log" &
		;;
	openmpi|mpich)
		printf '%s\n%s\n%s\n' "$srvmb" "$srvmb" "$srvmb" >"$tmp/mpi.mem"
		mpi_launch "$tr"
		"${LAUNCH[@]}" "$bin/bin/dlmd" -f "$tmp/mpi.mem" \
			>"$tmp/dlmd.log" 2>&1 &
		;;
	esac
	job=$!
	wait_registered "$tr" || return 1
	if [[ $tr == openmpi || $tr == mpich ]]; then
		# The server ranks: dlmd processes other than rank 0.
		local r0
		r0=$(sed -n 's/.*prog=dlmd msg="starting".* pid=\([0-9]*\).*/\1/p' "$tmp/dlmd.log")
		# (dlmd execs dlmd-openmpi or dlmd-mpich: that is their name)
		mapfile -t SERVERS < <(pgrep -x "dlmd-$tr" | grep -vx "$r0")
	fi
}

# triad TRANSPORT PCT [STREAM-ARGS...]: one triad run into the CSV.
triad() {
	local tr=$1 pct=$2 line rc=0 v c0 c1 swaps
	shift 2
	say "triad: $tr at $pct% local ..."
	c0=$(cpu_ticks "${SERVERS[@]}")
	line=$(timeout "$per_run_timeout" "$stream" -s "$mb" -i "$iters" "$@" 2>>"$tmp/progress") || rc=$?
	c1=$(cpu_ticks "${SERVERS[@]}")
	if ((rc != 0)) || [[ $line != *"bad=0"* ]]; then
		say "  FAILED (status $rc): $line"
		echo "triad,$tr,$pct,,MB/s,failed" >>"$csv"
		return
	fi
	v=$(sed -n 's/.*triad_mbs=\([0-9.]*\).*/\1/p' <<<"$line")
	swaps=$(sed -n 's/.*swapins=\([0-9]*\).*/\1/p' <<<"$line")
	say "  $line"
	say "  memory servers' CPU: $(((c1 - c0) * 1000 / $(getconf CLK_TCK))) ms for ${swaps:-0} swap-ins"
	echo "triad,$tr,$pct,$v,MB/s,server_cpu_ms=$(((c1 - c0) * 1000 / $(getconf CLK_TCK))) swapins=${swaps:-0}" >>"$csv"
}

SERVERS=()
triad local 100 -m malloc
for tr in $transports; do
	if [[ $tr == openmpi || $tr == mpich ]] &&
	   { [[ ! -x $bin/bin/dlmd-$tr ]] || ! command -v "mpirun.$tr" >/dev/null; }; then
		say "$tr: no dlmd-$tr or mpirun.$tr: skipped"
		continue
	fi
	start_daemon "$tr" || continue
	for pct in "${pcts[@]}"; do
		triad "$tr" "$pct" -m dlm -l "$pct"
	done
	stop_servers
done

report verbs_report.py "$csv" "$out/verbs.png" \
	"stream ${mb} MB x 3, ${iters} iterations, 1 MB DLM pages; soft-RoCE (rdma_rxe) on a veth pair, MTU 9000; $(uname -r)" |
	tee "$out/verbs.txt"
