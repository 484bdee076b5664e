#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# umode.sh [ARRAY_MB] [ITERATIONS] [PERCENT...] - issue 8's baselines: the
# same libdlm program (build/bench/umode_bench) in libdlm's three paging
# modes, side by side in one run, on one dlm-memserver on 127.0.0.1:
#
#   kernel   /dev/dlm (dlmem.ko) with dlmd -f MEMFILE, the default
#   sigsegv  DLM_MODE=sigsegv: libdlm pages with mprotect and a SIGSEGV
#            handler, the DLM-MPI paper's user-level design
#   uffd     DLM_MODE=uffd: libdlm pages with userfaultfd, as UMap does
#
# (i) per-fault cost: a space of 4x the local budget (8 MB local + 24 MB
#     on the server), touched sequentially one word per DLM page: passes
#     2..FAULT_PASSES (default 4) read and write every DLM page, one fault
#     each (one fetch and the write-back of a dirty victim);
#     microseconds per DLM page touched, at DLM pages of FAULT_PAGES_KB
#     (default 64 256 1024) KB;
# (ii) STREAM triad over three arrays of ARRAY_MB (default 32) at local
#     ratios PERCENT (default 100 50 25 10) of the arrays, 1 MB DLM pages,
#     ITERATIONS (default 3) iterations, every element checked.
#
# TESTS (default "fault triad") picks the parts.  The three modes read
# the same memfile per run.  At 100% the local MB
# also holds the DLM pages the kernel keeps free in reserve (module
# parameter reserve_dpages), as in stream.sh.
#
# Run as root in the VM:  vm-images/vm-run -- selftests/bench/umode.sh
# (make bench-umode).  Writes OUT/umode.csv, OUT/umode.txt and
# OUT/umode.png (OUT: $DLM_BENCH_OUT, default build/results/bench).
# Progress goes to stderr.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
bin=${DLM_BUILD:-$top/build}
out=${DLM_BENCH_OUT:-$bin/results/bench}
mb=${1:-32}
iters=${2:-3}
shift $(($# >= 2 ? 2 : $#))
pcts=("$@")
((${#pcts[@]})) || pcts=(100 50 25 10)
read -ra fpages <<<"${FAULT_PAGES_KB:-64 256 1024}"
fpasses=${FAULT_PASSES:-4}
read -ra modes <<<"${MODES:-kernel sigsegv uffd}"
tests=" ${TESTS:-fault triad} "	# which of the two parts to run
per_run_timeout=${RUN_TIMEOUT:-300}
port=7211
prog=$bin/bench/umode_bench
tmp=$(mktemp -d)
pids=()
t_start=$(date +%s)

say() { echo "umode.sh: [$(($(date +%s) - t_start))s] $*" >&2; }

cleanup() {
	kill "${pids[@]}" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

# shellcheck source=selftests/bench/lib.sh
. "$top/selftests/bench/lib.sh"
check_args
total=$((3 * mb))
srvmb=$((total + 40))
need_root
[[ -x $prog ]] || { say "$prog missing: make user"; exit 2; }
mkdir -p "$out"
csv=$out/umode.csv
echo "test,mode,param,value,faults,swapins,swapouts,status" >"$csv"

# run TEST MODE PARAM MEMFILE ARGS...: one run of umode_bench, recorded.
run() {
	local test=$1 mode=$2 param=$3 memfile=$4 line rc=0 key
	shift 4
	say "$test: $mode, $param ..."
	line=$(DLM_MODE=$mode timeout "$per_run_timeout" "$prog" "$test" "$@" \
		-- -f "$memfile" 2>>"$tmp/progress") || rc=$?
	if ((rc == 124)); then
		say "$test: $mode $param: no result within ${per_run_timeout}s"
		echo "$test,$mode,$param,,,,,timeout" >>"$csv"
		return
	fi
	if ((rc != 0)) || [[ $line != *"bad=0"* ]]; then
		say "$test: $mode $param: FAILED (status $rc): $line"
		tail -3 "$tmp/progress" >&2
		echo "$test,$mode,$param,,,,,failed" >>"$csv"
		return
	fi
	key=us_per_fault
	[[ $test == triad ]] && key=triad_mbs
	sed -n "s/.*$key=\([0-9.]*\).*faults=\([0-9]*\) swapins=\([0-9]*\) swapouts=\([0-9]*\).*/$test,$mode,$param,\1,\2,\3,\4,ok/p" \
		<<<"$line" >>"$csv"
	say "  $line"
}

# ---- one memory server, dlmd for the kernel mode -------------------------
load_dlmem
"$bin/bin/dlm-memserver" --listen 127.0.0.1:$port --size "$srvmb" \
	--log-level warn &
pids+=($!)
sleep 1
printf '%s\n%s 127.0.0.1:%s\n' 160 "$srvmb" "$port" >"$tmp/dlmd.mem"
"$bin/bin/dlmd" -f "$tmp/dlmd.mem" --log-level warn &
pids+=($!)
until [[ $(cat /sys/class/misc/dlm/daemon) != 0 ]]; do sleep 0.1; done
reserve=$(cat /sys/module/dlmem/parameters/reserve_dpages)
say "memory server 127.0.0.1:$port ($srvmb MB), dlmd registered; reserve_dpages=$reserve"

# ---- (i) per-fault cost ------------------------------------------------------
printf '8\n24 127.0.0.1:%s\n' "$port" >"$tmp/fault.mem"
for pk in "${fpages[@]}"; do
	[[ $tests == *" fault "* ]] || break
	for m in "${modes[@]}"; do
		DLM_PAGE_KB=$pk run fault "$m" "$pk" "$tmp/fault.mem" \
			-n "$fpasses"
	done
done

# ---- (ii) triad at local ratios ---------------------------------------------
for pct in "${pcts[@]}"; do
	[[ $tests == *" triad "* ]] || break
	local_mb=$(((total * pct + 99) / 100))
	((pct < 100)) || local_mb=$((local_mb + reserve))
	printf '%s\n%s 127.0.0.1:%s\n' "$local_mb" $((total + 8)) "$port" \
		>"$tmp/triad-$pct.mem"
	for m in "${modes[@]}"; do
		run triad "$m" "$pct" "$tmp/triad-$pct.mem" -s "$mb" -i "$iters"
	done
done

# ---- report -----------------------------------------------------------------
report umode_report.py "$csv" "$out/umode.png" \
	"triad ${mb} MB x 3, ${iters} iterations, 1 MB DLM pages; faults: 8 MB budget, 32 MB space; one dlm-memserver on 127.0.0.1; $(uname -r)" |
	tee "$out/umode.txt"
say "done in $(($(date +%s) - t_start)) s"
