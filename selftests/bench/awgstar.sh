#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# awgstar.sh [NODES...] - the seed report's section 4 (issue 7): the
# SPLASH-2-style kernels RADIX, blocked LU and FFT (build/bench/splash/)
# on the emulated AWG-STAR board against the same algorithms over Open
# MPI, on NODES (default 1 2 3) nodes of one machine:
#
#   awg   one process per board, /dev/awgstar, /dev/awgstar1, ... forming
#         one ring (awg_ring_start N of selftests/awgstar/lib.sh; a single
#         node needs no ring), in each board timing mode of MODES (default
#         "model fast": AWG_MODE_MODEL with fiber_m = 10 N as in the
#         report's Table 4, and AWG_MODE_FAST), untuned (every element
#         store one board write, as the report's programs) and tuned
#         (blocks / rows / runs computed locally, one awg_write each);
#   mpi   mpirun.openmpi -np N, shared memory (btl self,vader).
#
# Sizes: RADIX_ARGS (default "-n 4096 -r 256 -m 65536"), LU_ARGS ("-n 48":
# 3 x 3 blocks, work for each of 3 nodes), FFT_ARGS ("-m 8"); KERNELS
# (default "radix lu fft"); REPS runs of each (default 1; the report keeps
# the fastest).  Under QEMU TCG an untuned run on a ring costs about 5 ms
# per board write (LU n=48: 37000 writes, about 3 minutes).  DLM_BIN
# names another build directory for awgstard (selftests/awgstar/lib.sh).  Every run checks its result; a wrong
# one is recorded as failed.  Without the ring helpers, AWG runs on more
# than one node are skipped (and said so).
#
# Run as root in the VM:  vm-images/vm-run -- selftests/bench/awgstar.sh
# (make bench-awgstar; dlmem.ko, $DLM_KO if set, is loaded with
# awg_boards=AWG_BOARDS, default 3, if it is not loaded).  Writes
# OUT/awgstar.csv, OUT/awgstar.txt and OUT/awgstar.png (OUT:
# $DLM_BENCH_OUT, default build/results/bench),
# and copies the PNG to Documentation/images/awgstar.png (DOC_IMAGE=0: not).
# Progress on stderr.  Exit status 1 if a run failed.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
bin=${DLM_BUILD:-$top/build}
out=${DLM_BENCH_OUT:-$bin/results/bench}
splash=$bin/bench/splash
ringlib=$top/selftests/awgstar/lib.sh
nodes=("$@")
((${#nodes[@]})) || nodes=(1 2 3)
read -ra kernels <<<"${KERNELS:-radix lu fft}"
read -ra modes <<<"${MODES:-model fast}"
read -ra radix_args <<<"${RADIX_ARGS:--n 4096 -r 256 -m 65536}"
read -ra lu_args <<<"${LU_ARGS:--n 48}"
read -ra fft_args <<<"${FFT_ARGS:--m 8}"
reps=${REPS:-1}
boards_wanted=${AWG_BOARDS:-3}
per_run_timeout=${RUN_TIMEOUT:-600}
tmp=$(mktemp -d)
failed=0 ring_up=0
t_start=$(date +%s)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

say() { echo "awgstar.sh: [$(($(date +%s) - t_start))s] $*" >&2; }

cleanup() {
	if ((ring_up)); then
		awg_ring_stop >/dev/null 2>&1 || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

# shellcheck source=selftests/bench/lib.sh
. "$top/selftests/bench/lib.sh"
need_root
for k in "${kernels[@]}"; do
	[[ -x $splash/${k}_awg ]] || { say "$splash/${k}_awg missing: make user"; exit 2; }
done
mkdir -p "$out"
csv=$out/awgstar.csv
echo "kernel,version,mode,tuned,nodes,size,seconds,cpu_seconds,board_writes,frames,rotations,mpi_bytes,status" >"$csv"

# ---- the boards ------------------------------------------------------------------
load_dlmem awg_boards="$boards_wanted"
for _ in $(seq 50); do
	[[ -c /dev/awgstar ]] && break
	sleep 0.1
done
have_awg=1
if [[ ! -c /dev/awgstar ]]; then
	say "no /dev/awgstar (dlmem.ko without CONFIG_DLMEM_AWGSTAR?): AWG runs skipped"
	have_awg=0
fi
boards=$(cat /sys/module/dlmem/parameters/awg_boards 2>/dev/null || echo 0)
have_ring=0
if [[ -f $ringlib ]]; then
	# shellcheck source=/dev/null
	. "$ringlib"
	declare -F awg_ring_start >/dev/null && have_ring=1
fi
((have_ring)) || say "no awg_ring_start in $ringlib: AWG runs on more than one node skipped"
have_mpi=1
if ! command -v mpirun.openmpi >/dev/null || [[ ! -x $splash/radix_mpi ]]; then
	say "no mpirun.openmpi or no MPI build of the kernels: MPI runs skipped"
	have_mpi=0
fi
echo "meta,host,,,$(nproc),,,,,,,,$(uname -r) boards=$boards" >>"$csv"

# csv_row VERSION MODE: the RESULT line of $tmp/out as a CSV row.
csv_row() {
	local line k v
	declare -A f=()
	line=$(grep -m1 '^RESULT ' "$tmp/out") || return 1
	for kv in ${line#RESULT }; do
		k=${kv%%=*} v=${kv#*=}
		f[$k]=$v
	done
	[[ ${f[verify]:-} == ok ]] || return 1
	echo "${f[kernel]},$1,$2,${f[tuned]},${f[nodes]},${f[n]},${f[seconds]},${f[cpu_seconds]},${f[board_writes]:-},${f[frames]:-},${f[rotations]:-},${f[mpi_bytes]:-},ok"
}

# record KERNEL VERSION MODE TUNED N STATUS: the run's CSV row, or a failure.
record() {
	local row
	if [[ $6 == 0 ]] && row=$(csv_row "$2" "$3"); then
		echo "$row" >>"$csv"
		say "  $(grep -m1 '^RESULT ' "$tmp/out" | grep -oE ' (seconds|board_writes|mpi_bytes)=[^ ]*' | xargs)"
	else
		local why="status $6"
		((${6} == 124)) && why="timeout after ${per_run_timeout}s"
		say "  FAILED ($why):"
		tail -5 "$tmp/out" >&2
		echo "$1,$2,$3,$4,$5,,,,,,,,failed: $why" >>"$csv"
		failed=1
	fi
}

args_of() {	# args_of KERNEL: ARGS = its size options
	case $1 in
	radix) ARGS=("${radix_args[@]}") ;;
	lu) ARGS=("${lu_args[@]}") ;;
	fft) ARGS=("${fft_args[@]}") ;;
	esac
}

# awg_run KERNEL MODE TUNED N: N processes, one per board.
awg_run() {
	local k=$1 mode=$2 tuned=$3 np=$4 i dev rc=0 pids=() label=
	args_of "$k"
	if ((tuned)); then
		ARGS+=(--tuned)
		label=" tuned"
	fi
	say "awg $k$label, $np node(s), $mode mode: ${k}_awg ${ARGS[*]}"
	: >"$tmp/out"
	for ((i = 0; i < np; i++)); do
		dev=/dev/awgstar
		((i)) && dev=/dev/awgstar$i
		timeout "$per_run_timeout" "$splash/${k}_awg" "${ARGS[@]}" --device "$dev" \
			--nodes "$np" --mode "$mode" --fiber-m $((10 * np)) >>"$tmp/out" 2>&1 &
		pids+=($!)
	done
	for i in "${pids[@]}"; do
		wait "$i" || rc=$?
	done
	record "$k" awg "$mode" "$tuned" "$np" "$rc"
}

mpi_run() {	# mpi_run KERNEL N
	local k=$1 np=$2 rc=0
	args_of "$k"
	say "mpi $k, $np rank(s): ${k}_mpi ${ARGS[*]}"
	timeout "$per_run_timeout" mpirun.openmpi --allow-run-as-root --oversubscribe \
		--bind-to none --mca btl self,vader -np "$np" "$splash/${k}_mpi" "${ARGS[@]}" \
		>"$tmp/out" 2>&1 || rc=$?
	record "$k" mpi - 0 "$np" "$rc"
}

# ---- the runs --------------------------------------------------------------------
for np in "${nodes[@]}"; do
	awg_ok=$have_awg
	if ((awg_ok && np > 1)); then
		if ((!have_ring)); then
			awg_ok=0
		elif ((np > boards)); then
			say "$np nodes: dlmem.ko has only $boards boards (awg_boards): AWG skipped"
			awg_ok=0
		elif awg_ring_start "$np" >"$tmp/ring.log" 2>&1; then
			ring_up=1
			say "ring of $np nodes up"
		else
			say "awg_ring_start $np failed: AWG on $np nodes skipped"
			tail -5 "$tmp/ring.log" >&2
			awg_ok=0
		fi
	fi
	for rep in $(seq "$reps"); do
		for k in "${kernels[@]}"; do
			if ((awg_ok)); then
				for mode in "${modes[@]}"; do
					awg_run "$k" "$mode" 0 "$np"
					awg_run "$k" "$mode" 1 "$np"
				done
			fi
			if ((have_mpi)); then
				mpi_run "$k" "$np"
			fi
		done
		say "round $rep/$reps on $np node(s) done"
	done
	if ((ring_up)); then
		awg_ring_stop >/dev/null 2>&1 || true
		ring_up=0
	fi
done
# leave the boards in their default mode
if ((have_awg)); then
	"$splash/lu_awg" -n 16 --tuned --mode fast --fiber-m 10 >/dev/null 2>&1 || true
fi

# ---- report ------------------------------------------------------------------------
rev=$(git -C "$top" describe --always --dirty 2>/dev/null || echo '?')
title="SPLASH-2-style kernels, AWG-STAR emulation vs Open MPI; $(nproc) vCPUs; $(uname -r);"
title+=" radix ${radix_args[*]}, lu ${lu_args[*]}, fft ${fft_args[*]}; best of $reps; $rev"
[[ -n ${DLM_BIN:-} ]] && title+="; awgstard from $DLM_BIN"
report awgstar_report.py "$csv" "$out/awgstar.png" "$title" |
	tee "$out/awgstar.txt"
if [[ ${DOC_IMAGE:-1} != 0 && -f $out/awgstar.png ]]; then
	mkdir -p "$top/Documentation/images"
	cp "$out/awgstar.png" "$top/Documentation/images/awgstar.png"
fi
say "done in $(($(date +%s) - t_start)) s"
exit "$failed"
