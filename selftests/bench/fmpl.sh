#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fmpl.sh [ITERS] [RANKS...] - the OSU-style benchmark of FMPL against Open
# MPI and MPICH (issue 10 item 6), in one VM run.  The same program,
# selftests/bench/osu_fmpl.c, built three ways (build/bench/osu-fmpl over
# libfmpl and /dev/fmpl, osu-openmpi, osu-mpich), started by
#
#   fmpl      build/bin/fmplrun -np N
#   openmpi   mpirun.openmpi --oversubscribe --bind-to none -np N, with the
#             ob1 PML and the shared-memory BTL (--mca btl self,vader)
#   mpich     mpirun.mpich -np N (ch4:ucx: UCX's shared memory)
#
# runs, on 2 ranks, ping-pong latency (0 B .. MAX_BYTES, default 4 MB),
# windowed bandwidth (64 messages in flight, 1 B .. MAX_BYTES) and the
# pre-posted receive gap (K = 1, 10, 100, 600 outstanding receives), and
# for reference Open MPI's latency and bandwidth without CMA and FMPL's
# with the copying process alone (msg_copy_helpers=0); then on N =
# RANKS ranks (default 2 3 4; the VM has 2 vCPUs, so 3 and 4 are
# oversubscribed) barrier, bcast (8 B, 1 MB) and allreduce (8 B, 64 KB),
# for FMPL with both the kernel-native and the tree path.  ITERS (default
# 1000) is the number of timed iterations of small messages; larger ones
# get fewer.  Each run checks its data; a wrong result fails the run.
# Everything runs REPS times (default 2, one round after the other); the
# report takes each figure's best run, as interference from the host only
# ever adds time.  Before that, it counts the process_vm_readv/writev
# calls (CMA single copy) of a small ping-pong under each MPI (strace), to
# say whether the MPI's large messages are single-copy.
#
# Run as root in the VM:  vm-images/vm-run -- selftests/bench/fmpl.sh
# (make bench-fmpl).  Writes OUT/fmpl.csv, OUT/fmpl-osu.txt (every run's
# OSU-style tables), OUT/fmpl.txt (tables, ratios and issue 10's bars)
# and OUT/fmpl.png (OUT: $DLM_BENCH_OUT, default build/results/bench).
# Progress on stderr.  IMPLS="fmpl openmpi mpich" picks the systems,
# RUN_TIMEOUT (default 600 s) bounds each run.  Exit status 1 if a run
# failed.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
bin=${DLM_BUILD:-$top/build}
out=${DLM_BENCH_OUT:-$bin/results/bench}
iters=${1:-1000}
shift $(($# >= 1 ? 1 : 0))
ranks=("$@")
((${#ranks[@]})) || ranks=(2 3 4)
impls=${IMPLS:-fmpl openmpi mpich}
max_bytes=${MAX_BYTES:-4194304}
reps=${REPS:-2}
per_run_timeout=${RUN_TIMEOUT:-600}
tmp=$(mktemp -d)
failed=0

say() { echo "fmpl.sh: $*" >&2; }
# shellcheck source=selftests/bench/lib.sh
. "$top/selftests/bench/lib.sh"

trap 'rm -rf "$tmp"' EXIT

need_root
mkdir -p "$out"
csv=$out/fmpl.csv
raw=$out/fmpl-osu.txt
echo "test,impl,mode,ranks,size,value,extra" >"$csv"
: >"$raw"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# ---- what can run ---------------------------------------------------------------
have=()
for impl in $impls; do
	if [[ ! -x $bin/bench/osu-$impl ]]; then
		say "$impl: no $bin/bench/osu-$impl (make user): skipped"
		continue
	fi
	case $impl in
	fmpl)
		if [[ ! -c /dev/fmpl ]]; then
			load_dlmem || true
			for _ in $(seq 50); do
				[[ -c /dev/fmpl ]] && break
				sleep 0.1
			done
		fi
		if [[ ! -c /dev/fmpl ]]; then
			say "fmpl: no /dev/fmpl (dlmem.ko built without CONFIG_DLMEM_FMPL=y?): skipped"
			continue
		fi
		if [[ ! -x $bin/bin/fmplrun ]]; then
			say "fmpl: no $bin/bin/fmplrun: skipped"
			continue
		fi
		;;
	*)
		if ! command -v "mpirun.$impl" >/dev/null; then
			say "$impl: no mpirun.$impl: skipped"
			continue
		fi
		;;
	esac
	have+=("$impl")
done
((${#have[@]})) || { say "nothing to run"; exit 1; }
ncpu=$(nproc)
echo "meta,host,-,$ncpu,,$(uname -r)," >>"$csv"
if [[ -r /sys/module/dlmem/parameters/msg_max_mb ]]; then
	echo "meta,fmpl,msg_max_mb,,,$(cat /sys/module/dlmem/parameters/msg_max_mb)," >>"$csv"
fi
helpers=/sys/module/dlmem/parameters/msg_copy_helpers
if [[ -r $helpers ]]; then
	echo "meta,fmpl,msg_copy_helpers,,,$(cat "$helpers")," >>"$csv"
fi

# launch IMPL N [MODE]: LAUNCH = the command line starting N ranks of IMPL
# (MODE nocma: Open MPI with CMA single copy turned off; MODE fast: FMPL
# with FMPL_FAST=64).
launch() {
	if [[ $1 == fmpl ]]; then
		LAUNCH=("$bin/bin/fmplrun" -np "$2")
		# MODE fast: libfmpl's fast indices (no system call up to 96 B).
		if [[ ${3:-} == fast ]]; then
			LAUNCH=(env FMPL_FAST=64 "${LAUNCH[@]}")
		fi
		return
	fi
	mpi_launch "$1" "$2"
	if [[ $1 == openmpi ]]; then
		LAUNCH+=(--mca pml ob1 --mca btl "self,vader")
	fi
	if [[ ${3:-} == nocma ]]; then
		LAUNCH+=(--mca btl_vader_single_copy_mechanism none)
	fi
}

# ---- CMA single copy under each MPI -------------------------------------------------
# The process_vm_readv/writev calls (and how many failed) of a ping-pong of
# 0 B .. 4 MB, 10 round trips per size.
if command -v strace >/dev/null; then
	for impl in "${have[@]}"; do
		[[ $impl == fmpl ]] && continue
		say "$impl: counting CMA (process_vm_readv/writev) calls of a short ping-pong ..."
		launch "$impl" 2
		strace -f -qq -c -o "$tmp/strace" -e trace=process_vm_readv,process_vm_writev \
			timeout 300 "${LAUNCH[@]}" "$bin/bench/osu-$impl" -t latency -n 10 \
			>/dev/null 2>"$tmp/err" || say "  (status $?)"
		read -r calls errors < <(awk '$NF ~ /^process_vm_(read|write)v$/ {
			c += $4; if (NF == 6) e += $5 } END { print c + 0, e + 0 }' "$tmp/strace")
		mech=
		if [[ $impl == openmpi ]]; then
			mech=$(ompi_info --parsable --level 9 --param btl vader 2>/dev/null |
				sed -n 's/.*btl_vader_single_copy_mechanism:value:\(.*\)/\1/p' | head -1)
		fi
		echo "meta,$impl,cma,,,$calls,errors=$errors${mech:+ vader_single_copy_mechanism=$mech}" >>"$csv"
		say "  $calls calls, $errors failed${mech:+ (btl_vader_single_copy_mechanism=$mech)}"
	done
fi

# ---- the runs -------------------------------------------------------------------------
# parse IMPL MODE N REP: the OSU-style tables on stdin as CSV rows.
parse() {
	awk -v impl="$1" -v mode="$2" -v n="$3" -v rep="rep=$4" '
	/^# osu_fmpl / { test = $3; next }
	/^#/ || NF == 0 { next }
	{ pre = impl "," mode "," n "," }
	test == "latency" { print "latency," pre $1 "," $2 "," rep }
	test == "bandwidth" { print "bw," pre $1 "," $2 "," rep }
	test == "gap" { print "gap," pre $1 "," $2 "," rep; print "gap_last," pre $1 "," $3 "," rep }
	test == "collectives" { print $1 "," pre $2 "," $3 "," rep " max=" $4 }'
}

# value TEST IMPL MODE N SIZE: that row's value in the CSV.
value() {
	awk -F, -v k="$1,$2,$3,$4,$5" '
	$1 "," $2 "," $3 "," $4 "," $5 == k { v = $6 } END { print v == "" ? "-" : v }' "$csv"
}

# run IMPL MODE N OSU-ARGS...: one job; its tables into the CSV.
run() {
	local impl=$1 mode=$2 n=$3 rc=0 t0 why
	shift 3
	launch "$impl" "$n" "$mode"
	say "[$rep/$reps] $impl${mode:+ $mode}, $n ranks: osu-$impl $* ..."
	t0=$SECONDS
	timeout "$per_run_timeout" "${LAUNCH[@]}" "$bin/bench/osu-$impl" "$@" \
		>"$tmp/out" 2>"$tmp/err" || rc=$?
	{
		echo "## $impl${mode:+ $mode}, $n ranks: ${LAUNCH[*]} osu-$impl $* (status $rc)"
		cat "$tmp/out"
	} >>"$raw"
	if ((rc != 0)); then
		say "  FAILED (status $rc$( ((rc == 124)) && echo ": timeout after ${per_run_timeout}s"))"
		tail -5 "$tmp/err" >&2
		why=$( ((rc == 124)) && echo timeout || echo "status $rc")
		echo "failed,$impl,${mode:--},$n,,,$why rep=$rep: ${*//,/+}" >>"$csv"
		failed=1
		return 0
	fi
	parse "$impl" "${mode:--}" "$n" "$rep" <"$tmp/out" >>"$csv"
	say "  done in $((SECONDS - t0)) s"
}

# 2 ranks: latency, bandwidth, gap.
for rep in $(seq "$reps"); do
	for impl in "${have[@]}"; do
		run "$impl" "" 2 -t latency,bw,gap -m "$max_bytes" -n "$iters"
		say "  8 B latency $(value latency "$impl" - 2 8) us," \
			"1 MB bandwidth $(value bw "$impl" - 2 1048576) MB/s," \
			"gap at K=1/600 $(value gap "$impl" - 2 1)/$(value gap "$impl" - 2 600) us"
		# FMPL's fast indices: messages up to 96 B with no system call.
		if [[ $impl == fmpl ]]; then
			run fmpl fast 2 -t latency,bw -m "$max_bytes" -n "$iters"
			# For reference: the copying process alone, no helpers.
			if [[ -w $helpers ]]; then
				old=$(cat "$helpers")
				echo 0 >"$helpers"
				run fmpl alone 2 -t latency,bw -m "$max_bytes" -n "$iters"
				echo "$old" >"$helpers"
			fi
		fi
		# For reference: Open MPI copying in and out of shared memory.
		if [[ $impl == openmpi ]]; then
			run openmpi nocma 2 -t latency,bw -m "$max_bytes" -n "$iters"
		fi
	done
done
# Collectives on each number of ranks.
for rep in $(seq "$reps"); do
	for n in "${ranks[@]}"; do
		for impl in "${have[@]}"; do
			if [[ $impl == fmpl ]]; then
				for mode in native tree; do
					run fmpl "$mode" "$n" -t coll -n "$iters" -c "$mode"
				done
			else
				run "$impl" "" "$n" -t coll -n "$iters"
			fi
		done
	done
done

rev=$(git -C "$top" describe --always --dirty 2>/dev/null || echo '?')
title="osu_fmpl: FMPL vs Open MPI vs MPICH; $ncpu vCPUs; $(uname -r);"
title+=" $iters iterations (small messages), best of $reps runs; $rev"
report fmpl_report.py "$csv" "$out/fmpl.png" "$title" | tee "$out/fmpl.txt"
exit "$failed"
