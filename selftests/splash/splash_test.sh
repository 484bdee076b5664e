#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# splash_test.sh - the SPLASH-2-style kernels (build/bench/splash/) in the
# VM, as root with dlmem.ko loaded (TAP):
#
#   - each AWG-STAR kernel (radix, LU, FFT; untuned and tuned) as one node
#     on /dev/awgstar, at small sizes, in the board's fast and (LU) model
#     timing modes: verify=ok, and the board counted the writes the
#     kernel made (untuned LU: one write per element store);
#   - a result spoiled on purpose (SPLASH_CORRUPT=1) is caught: FAIL,
#     status 1;
#   - each MPI kernel with 1 and 2 ranks (Open MPI);
#   - with selftests/awgstar/lib.sh (awg_ring_start N, awg_ring_stop):
#     each AWG kernel on a ring of 2 nodes, one process per board
#     (dlmem.ko is reloaded with awg_boards=2 for it, then as before).
#
# What needs a missing device, MPI or ring helper is skipped.
#   vm-images/vm-run -- selftests/splash/splash_test.sh
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
ringlib=$top/selftests/awgstar/lib.sh
# The ring helpers first: the definitions below (and the trap) win.
have_ringlib=0
if [[ -f $ringlib ]]; then
	# shellcheck source=/dev/null
	. "$ringlib"
	declare -F awg_ring_start >/dev/null && declare -F awg_ring_stop >/dev/null &&
		have_ringlib=1
fi
build=${DLM_BUILD:-$top/build}
bin=$build/bench/splash
ko=${DLM_KO:-$top/kmod/dlmem.ko}
tmp=$(mktemp -d)
n=0 fail=0
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# shellcheck disable=SC2054 # a comma in an option's value
mpirun=(mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none
	--mca btl self,vader)
# Untuned runs are one board write per element store: small sizes.
RADIX=(-n 4096 -r 256 -m 65536)
LU=(-n 32)
FFT=(-m 8)
ring_up=0 reloaded=0

cleanup() {
	((ring_up)) && awg_ring_stop >/dev/null 2>&1
	if ((reloaded)); then
		rmmod dlmem 2>/dev/null && insmod "$ko" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); echo "not ok $n - $*"; fail=1; }
skip() { n=$((n + 1)); echo "ok $n - $* # SKIP $SKIP_WHY"; }

# field KEY: KEY's value in the RESULT line of $tmp/out.
field() {
	sed -n "s/^RESULT .* $1=\([^ ]*\).*/\1/p" "$tmp/out" | head -1
}

# verdict DESCRIPTION STATUS [MIN_WRITES]: ok when STATUS is 0, the result
# line says verify=ok and (AWG) the board counted at least MIN_WRITES.
verdict() {
	local w
	w=$(field board_writes)
	if [[ $2 == 0 ]] && grep -q '^RESULT .*verify=ok' "$tmp/out" &&
	   { [[ -z ${3:-} ]] || [[ ${w:-0} -ge $3 ]]; }; then
		ok "$1: $(field seconds) s${w:+, $w board writes}$(
			[[ -n $(field mpi_bytes) ]] && echo ", $(field mpi_bytes) bytes sent")"
	else
		notok "$1 (status $2${3:+, want >= $3 board writes, got ${w:-none}})"
		sed 's/^/# /' "$tmp/out" | tail -15
	fi
}

# awg NODES PROG ARGS...: one process per board of the ring
# (/dev/awgstar, /dev/awgstar1, ...), output in $tmp/out; status: the worst.
awg() {
	local np=$1 i rc=0 dev pids=()
	shift
	: >"$tmp/out"
	for ((i = 0; i < np; i++)); do
		dev=/dev/awgstar
		((i)) && dev=/dev/awgstar$i
		timeout 300 "$@" --device "$dev" --nodes "$np" >>"$tmp/out" 2>&1 &
		pids+=($!)
	done
	for i in "${pids[@]}"; do
		wait "$i" || rc=$?
	done
	return "$rc"
}

echo "TAP version 13"
if [[ $(id -u) != 0 ]]; then
	echo "1..0 # SKIP needs root and dlmem.ko (run it with vm-images/vm-run)"
	exit 4
fi
for p in radix_awg lu_awg fft_awg; do
	if [[ ! -x $bin/$p ]]; then
		echo "Bail out! $bin/$p missing: run 'make user' first"
		exit 1
	fi
done
if [[ ! -d /sys/module/dlmem ]] && ! insmod "$ko"; then
	echo "Bail out! cannot load $ko"
	exit 1
fi
for _ in $(seq 50); do
	[[ -c /dev/awgstar ]] && break
	sleep 0.1
done
echo "1..20"

# ---- one node on /dev/awgstar ---------------------------------------------------
have_board=1
SKIP_WHY="no /dev/awgstar (dlmem.ko without CONFIG_DLMEM_AWGSTAR, or awg_boards=0)"
[[ -c /dev/awgstar ]] || have_board=0
# The untuned runs' board writes, one per element store (as counted over
# awg_mock.c): radix 2 passes x (4096 keys + 256 counts) = 8704, LU
# n = 32 10912 (about n^3 / 3), FFT of 256 points 3456 (3 transposes and
# the twiddles, 256 each, and the rows' swaps and butterflies).
run_one() {	# run_one NAME MIN_WRITES PROG ARGS...
	local name=$1 min=$2
	shift 2
	if ((!have_board)); then
		skip "$name"
		return
	fi
	awg 1 "$@"
	verdict "$name" $? "$min"
}
run_one "radix awg, 1 node, fast mode" 8704 "$bin/radix_awg" "${RADIX[@]}" --mode fast
run_one "radix awg tuned, 1 node" 2 "$bin/radix_awg" "${RADIX[@]}" --tuned
run_one "lu awg, 1 node, fast mode" 10912 "$bin/lu_awg" "${LU[@]}" --mode fast
run_one "lu awg tuned, 1 node: one write per block update" 5 "$bin/lu_awg" "${LU[@]}" --tuned
run_one "fft awg, 1 node" 3456 "$bin/fft_awg" "${FFT[@]}"
run_one "fft awg tuned, 1 node" 80 "$bin/fft_awg" "${FFT[@]}" --tuned
run_one "lu awg, 1 node, model mode (fiber 10 m)" 10912 "$bin/lu_awg" "${LU[@]}" \
	--mode model --fiber-m 10
run_one "lu awg tuned, 1 node, model mode" 5 "$bin/lu_awg" "${LU[@]}" --tuned \
	--mode model --fiber-m 10
# Tuned LU of n = 32 (2 x 2 blocks) updates 5 blocks: exactly 5 board
# writes of 2 KB, 10 frames of 1 KiB (and the board back in fast mode).
if ((have_board)); then
	awg 1 "$bin/lu_awg" "${LU[@]}" --tuned --mode fast
	rc=$?
	if [[ $rc == 0 ]] && [[ $(field board_writes) == 5 && $(field frames) == 10 ]]; then
		ok "tuned LU n=32: 5 block updates, 5 board writes, 10 frames"
	else
		notok "tuned LU n=32: want 5 board writes and 10 frames (status $rc)"
		sed 's/^/# /' "$tmp/out"
	fi
else
	skip "tuned LU write count"
fi

if ((have_board)); then
	SPLASH_CORRUPT=1 awg 1 "$bin/fft_awg" -m 6
	rc=$?
	if [[ $rc == 1 ]] && grep -q 'verify=FAIL' "$tmp/out"; then
		ok "a spoiled FFT result on the board gives verify=FAIL and status 1"
	else
		notok "a spoiled FFT result gives verify=FAIL and status 1 (status $rc)"
		sed 's/^/# /' "$tmp/out"
	fi
else
	skip "a spoiled result"
fi

# ---- MPI --------------------------------------------------------------------------
SKIP_WHY="no Open MPI build of the kernels (mpicc.openmpi; make deps, make)"
for k in radix lu fft; do
	for np in 1 2; do
		if [[ ! -x $bin/${k}_mpi ]] || ! command -v mpirun.openmpi >/dev/null; then
			skip "$k mpi, $np ranks"
			continue
		fi
		case $k in
		radix) args=("${RADIX[@]}") ;;
		lu) args=("${LU[@]}") ;;
		fft) args=("${FFT[@]}") ;;
		esac
		timeout 300 "${mpirun[@]}" -np "$np" "$bin/${k}_mpi" "${args[@]}" \
			>"$tmp/out" 2>&1
		verdict "$k mpi, $np ranks" $?
	done
done

# ---- a ring of two nodes ---------------------------------------------------------
ring=0
if ((!have_ringlib)); then
	SKIP_WHY="no awg_ring_start in $ringlib (the ring daemon's helpers)"
else
	boards=$(cat /sys/module/dlmem/parameters/awg_boards 2>/dev/null || echo 0)
	if ((boards < 2)); then
		if rmmod dlmem 2>"$tmp/rmmod.err" && insmod "$ko" awg_boards=2; then
			reloaded=1
		else
			SKIP_WHY="cannot reload dlmem.ko with awg_boards=2: $(cat "$tmp/rmmod.err")"
			[[ -d /sys/module/dlmem ]] || insmod "$ko"
		fi
	fi
	if (($(cat /sys/module/dlmem/parameters/awg_boards 2>/dev/null || echo 0) >= 2)); then
		if awg_ring_start 2 >"$tmp/ring.log" 2>&1; then
			ring=1 ring_up=1
		else
			SKIP_WHY="awg_ring_start 2 failed: $(tail -1 "$tmp/ring.log")"
		fi
	fi
fi
for t in "radix awg:radix_awg:${RADIX[*]}" "lu awg:lu_awg:${LU[*]}" \
	 "lu awg tuned:lu_awg:${LU[*]} --tuned" "fft awg:fft_awg:${FFT[*]}"; do
	IFS=: read -r name prog args <<<"$t"
	if ((!ring)); then
		skip "$name, 2 nodes"
		continue
	fi
	# shellcheck disable=SC2086 # the arguments' words
	awg 2 "$bin/$prog" $args
	verdict "$name, 2 nodes (a ring of /dev/awgstar and /dev/awgstar1)" $? 1
done
exit $fail
