#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# stream.sh [ARRAY_MB] [ITERATIONS] [PERCENT...] - the remote-paging
# benchmark of issue 3, in one run: STREAM-style copy and triad (stream)
# over three arrays of ARRAY_MB (default 128) at local-memory ratios
# PERCENT (default 100 50 25 10 5), side by side:
#
#   local  all-local anonymous memory (the reference)
#   dlm    /dev/dlm, dlmd and two dlm-memservers over TCP on 127.0.0.1,
#          local budget = PERCENT of the arrays, 1 MB DLM pages
#   dlmb   the same arrays in anonymous memory under a cgroup v2
#          memory.max (as nbd below), swapping to /dev/dlmb0 on the same
#          dlmd and memory servers as dlm
#   nbd    the same arrays in anonymous memory under a cgroup v2
#          memory.max of PERCENT of the arrays (+ SLACK_MB for the
#          program itself), swapping to nbd served over 127.0.0.1 from a
#          file on tmpfs
#   zram   the same with swap on zram (lzo-rle)
#   xfer   the raw rate of dlmd's TCP transport for 1 MB transfers to the
#          same memory servers (xfer_bench; one direction, 1 and 2
#          servers; medians of XFER_RUNS runs, default 3)
#
# and, on each of local, dlm, dlmb, nbd and zram at the same ratios, the
# Himeno-style benchmark (himeno; grid HIMENO_SIZE, default 97x97x193 =
# 98 MB; HIMENO_ITERS sweeps, default 2), through
# libdlm with DLM pages of HIMENO_PAGE_KB (default 128: the local budget
# must hold several DLM pages of each of Himeno's 14 arrays, or every
# grid point faults) for dlm.  Every himeno run must end with the
# all-local run's residual, bit for bit.
#
# Run as root in the VM:  vm-images/vm-run -- selftests/bench/stream.sh
# Writes OUT/stream.csv, OUT/himeno.csv, OUT/stream.txt and OUT/stream.png (OUT:
# $DLM_BENCH_OUT, default build/results/bench).  Progress goes to stderr.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
bin=${DLM_BUILD:-$top/build}
out=${DLM_BENCH_OUT:-$bin/results/bench}
# 128 MB: at 10% the budget holds 38 DLM pages of 1 MB for the triad's
# three streams (32 MB arrays leave it 9: one in use, one read ahead per
# stream and the reserve; Documentation/benchmarks.rst, "The arrays' size").
mb=${1:-128}
iters=${2:-3}
shift $(($# >= 2 ? 2 : $#))
pcts=("$@")
((${#pcts[@]})) || pcts=(100 50 25 10 5)
slack=${SLACK_MB:-4}
per_run_timeout=${RUN_TIMEOUT:-900}
systems=${SYSTEMS:-dlm dlmb nbd zram}	# which to run besides local and xfer
hsize=${HIMENO_SIZE:-97x97x193}
hiters=${HIMENO_ITERS:-2}
hpage=${HIMENO_PAGE_KB:-128}
stream=$bin/bench/stream
himeno=$bin/bench/himeno
tmp=$(mktemp -d)
pids=()
cg=/sys/fs/cgroup/dlm-bench
swapdev=
job=		# for lib.sh's stop_dlmd: dlmd is in $pids here
nbd_up=		# set up by this run: torn down by cleanup
zram_up=

say() { echo "stream.sh: $*" >&2; }
# shellcheck source=selftests/bench/lib.sh
. "$top/selftests/bench/lib.sh"

cleanup() {
	[[ -n $swapdev ]] && swapoff "$swapdev" 2>/dev/null
	[[ -b /dev/dlmb0 ]] && "$bin/bin/dlmctl" blk-del 0 2>/dev/null
	[[ -n $nbd_up ]] && { nbd-client -d /dev/nbd0 >/dev/null 2>&1 || true; }
	[[ -n $zram_up ]] && echo 1 >/sys/block/zram0/reset 2>/dev/null
	kill "${pids[@]}" 2>/dev/null || true
	wait 2>/dev/null || true
	[[ -d $cg ]] && rmdir "$cg" 2>/dev/null
	mountpoint -q "$tmp/shm" && umount "$tmp/shm"
	rm -rf "$tmp"
}
trap cleanup EXIT
check_args
xruns=${XFER_RUNS:-3}
[[ $xruns =~ ^[1-9][0-9]?$ ]] || {
	say "XFER_RUNS '$xruns': give a whole number from 1 to 99"
	exit 2
}
total=$((3 * mb))

need_root
for tool in nbd-server nbd-client mkswap swapon; do
	command -v $tool >/dev/null || { say "$tool missing: make deps"; exit 2; }
done
mkdir -p "$out"
csv=$out/stream.csv
hcsv=$out/himeno.csv
echo "system,local_pct,copy_mbs,triad_mbs,triad_s,status" >"$csv"
echo "system,local_pct,mflops,run_s,status" >"$hcsv"

# run stream|himeno SYSTEM PCT CMD...: one run, recorded in its CSV; its
# result line in $last (empty if it failed).
run() {
	local kind=$1 sys=$2 pct=$3 line rc=0 to=$csv empty=,,,
	last=
	shift 3
	[[ $kind == himeno ]] && to=$hcsv empty=,,
	say "$kind: $sys at $pct% local ..."
	line=$(timeout "$per_run_timeout" "$@" 2>>"$tmp/progress") || rc=$?
	if ((rc == 124)); then
		say "$kind: $sys at $pct%: no result within ${per_run_timeout}s"
		echo "$sys,$pct${empty}timeout" >>"$to"
		return
	fi
	if ((rc != 0)) || [[ $line != *"bad=0"* ]]; then
		say "$kind: $sys at $pct%: FAILED (status $rc): $line"
		tail -3 "$tmp/progress" >&2
		echo "$sys,$pct${empty}failed" >>"$to"
		return
	fi
	if [[ $kind == stream ]]; then
		sed -n "s/.*copy_mbs=\([0-9.]*\) triad_mbs=\([0-9.]*\) triad_s=\([0-9.]*\).*/$sys,$pct,\1,\2,\3,ok/p" \
			<<<"$line" >>"$to"
	else
		sed -n "s/.*run_s=\([0-9.]*\) mflops=\([0-9.]*\).*/$sys,$pct,\2,\1,ok/p" \
			<<<"$line" >>"$to"
	fi
	say "  $line"
	last=$line
}

# ---- all-local ----------------------------------------------------------------
# The all-local Himeno run also gives the data size and the residual every
# other run must reproduce.
run stream local 100 "$stream" -m malloc -s "$mb" -i "$iters"
run himeno local 100 "$himeno" -s "$hsize" -n "$hiters" -m malloc
if ! himeno_ref "$last"; then
	say "the all-local himeno run failed: no reference to compare with"
	exit 1
fi
hrun=("$himeno" -s "$hsize" -n "$hiters" -c "$hgosa")
[[ " $systems " != *" dlm "* ]] || himeno_budget_ok "${pcts[@]}"

# ---- memory servers, dlmd, raw transport rate --------------------------------
load_dlmem
hmbi=$(mb_of 100)
srvmb=$(((total > hmbi ? total : hmbi) + 8))
for port in 7201 7202; do
	"$bin/bin/dlm-memserver" --listen 127.0.0.1:$port --size "$srvmb" \
		--log-level warn &
	pids+=($!)
done
sleep 1
median() { printf '%s\n' "$@" | sort -g | sed -n "$((($# + 1) / 2))p"; }
# xfer_median SERVER...: "servers=N write_mbs=W read_mbs=R", the medians
# of $xruns xfer_bench runs (XFER_RUNS, default 3): one run's rate moves
# by a fifth between runs in one VM, more than the bar's margin.
xfer_median() {
	local -a w=() r=()
	local k line
	for ((k = 0; k < xruns; k++)); do
		line=$("$bin/bench/xfer_bench" -n "$total" "$@") || {
			say "  xfer_bench $*: failed: $line"
			return 1	# and set -e ends the run, as before
		}
		say "  $line"
		w+=("$(sed -n 's/.* write_mbs=\([0-9.]*\).*/\1/p' <<<"$line")")
		r+=("$(sed -n 's/.* read_mbs=\([0-9.]*\).*/\1/p' <<<"$line")")
	done
	echo "servers=$# write_mbs=$(median "${w[@]}") read_mbs=$(median "${r[@]}")"
}
say "raw transport rate (1 MB transfers, xfer_bench, medians of $xruns) ..."
x1=$(xfer_median 127.0.0.1:7201)
x2=$(xfer_median 127.0.0.1:7201 127.0.0.1:7202)
say "  1 server:  $x1"
say "  2 servers: $x2"
for x in "$x1" "$x2"; do
	n=$(sed -n 's/.*servers=\([0-9]*\).*/\1/p' <<<"$x")
	sed -n "s/.*write_mbs=\([0-9.]*\) read_mbs=\([0-9.]*\).*/xfer-write-$n,0,,\1,,ok\nxfer-read-$n,0,,\2,,ok/p" \
		<<<"$x" >>"$csv"
done
printf '%s\n%s 127.0.0.1:7201\n%s 127.0.0.1:7202\n' "$srvmb" \
	"$srvmb" "$srvmb" >"$tmp/memfile"
"$bin/bin/dlmd" -f "$tmp/memfile" --log-level warn &
dlmd_pid=$!
pids+=("$dlmd_pid")
until [[ $(cat /sys/class/misc/dlm/daemon) != 0 ]]; do sleep 0.1; done
hreserve=$(cat /sys/module/dlmem/parameters/reserve_dpages)

# ---- /dev/dlm ------------------------------------------------------------------
for pct in "${pcts[@]}"; do
	[[ " $systems " == *" dlm "* ]] || break
	run stream dlm "$pct" "$stream" -m dlm -s "$mb" -l "$pct" -i "$iters"
	# libdlm's memfile: the local budget, then room for all data per
	# server.  At 100% the budget also holds the free DLM pages a remote
	# space keeps in reserve (module parameter reserve_dpages), or it
	# would not hold all the data.
	hlocal=$(mb_of "$pct")
	((pct < 100)) || hlocal=$((hlocal + (hreserve * hpage + 1023) / 1024))
	printf '%s\n%s 127.0.0.1:7201\n%s 127.0.0.1:7202\n' "$hlocal" \
		"$hmbi" "$hmbi" >"$tmp/himeno.mem"
	run himeno dlm "$pct" "${hrun[@]}" -m dlm -- -f "$tmp/himeno.mem" \
		--page-kb="$hpage"
done

# ---- swap under a cgroup memory limit ------------------------------------------------
mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup
grep -qw memory /sys/fs/cgroup/cgroup.subtree_control ||
	echo +memory >/sys/fs/cgroup/cgroup.subtree_control
mkdir -p "$cg"

# "${in_cg[@]}" CMD...: run CMD in the benchmark's cgroup.
# shellcheck disable=SC2016	# $$ and $@ are for that sh
in_cg=(sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$cg")

# swap_runs SYSTEM: stream at every ratio in the cgroup, swapping to $swapdev.
swap_runs() {
	local sys=$1 pct limit
	for pct in "${pcts[@]}"; do
		limit=$(((total * pct / 100 + slack) * 1024 * 1024))
		echo "$limit" >"$cg/memory.max"
		run stream "$sys" "$pct" "${in_cg[@]}" \
			"$stream" -m malloc -s "$mb" -l "$pct" -i "$iters"
		limit=$((($(mb_of "$pct") + slack) * 1024 * 1024))
		echo "$limit" >"$cg/memory.max"
		run himeno "$sys" "$pct" "${in_cg[@]}" "${hrun[@]}" -m malloc
	done
}

swapoff -a
if [[ " $systems " == *" dlmb "* ]]; then
swapdev=$("$bin/bin/dlmctl" blk-add $((2 * srvmb))M)
mkswap "$swapdev" >/dev/null
swapon "$swapdev"
swap_runs dlmb
swapoff "$swapdev"
"$bin/bin/dlmctl" blk-del "$swapdev"
swapdev=
fi

# The memory servers hold what dlm and dlmb wrote: free that memory before
# nbd's store on tmpfs fills.  (With 3 x 128 MB arrays in a 2 GB guest
# they did not, the kernel swapped nbd-server's own tmpfs pages out to
# nbd, and nbd-server and the run hung.)  dlmd first, or it reports its
# servers dead.
kill -TERM "$dlmd_pid"
wait "$dlmd_pid" 2>/dev/null || true
stop_servers

if [[ " $systems " == *" nbd "* ]]; then
mkdir -p "$tmp/shm"
mount -t tmpfs -o size=$((2 * srvmb + 64))m tmpfs "$tmp/shm"
truncate -s $((2 * srvmb))M "$tmp/shm/nbd.img"
cat >"$tmp/nbd.conf" <<EOF
[generic]
	user = root
	group = root
	listenaddr = 127.0.0.1
	port = 10809
[dlmbench]
	exportname = $tmp/shm/nbd.img
EOF
modprobe nbd nbds_max=1
nbd-server -C "$tmp/nbd.conf" -p "$tmp/nbd.pid"
sleep 1
pids+=("$(cat "$tmp/nbd.pid")")
nbd_up=1
nbd-client 127.0.0.1 10809 /dev/nbd0 -N dlmbench -b 4096 >/dev/null
mkswap /dev/nbd0 >/dev/null
swapdev=/dev/nbd0
swapon /dev/nbd0
swap_runs nbd
swapoff /dev/nbd0
swapdev=
nbd-client -d /dev/nbd0 >/dev/null
nbd_up=
fi

if [[ " $systems " == *" zram "* ]]; then
modprobe zram num_devices=1
zram_up=1
[[ $(cat /sys/block/zram0/disksize) == 0 ]] || echo 1 >/sys/block/zram0/reset
echo $((2 * srvmb))M >/sys/block/zram0/disksize
mkswap /dev/zram0 >/dev/null
swapdev=/dev/zram0
swapon /dev/zram0
swap_runs zram
swapoff /dev/zram0
swapdev=
fi

# ---- report ----------------------------------------------------------------------------
report stream_report.py "$csv" "$out/stream.png" \
	"stream ${mb} MB x 3, ${iters} iterations, 1 MB DLM pages; himeno $hsize ($hmb MB), $hiters sweeps, $hpage KB DLM pages; $(uname -r)" \
	"$hcsv" |
	tee "$out/stream.txt"
