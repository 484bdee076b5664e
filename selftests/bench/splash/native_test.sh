#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# native_test.sh [BUILD_DIR] - the SPLASH-2-style kernels natively (TAP),
# without /dev/awgstar: the MPI versions under Open MPI with 1, 2 and 3
# ranks, and the AWG-STAR versions linked with awg_mock.c (the region a
# shared file, the barrier a counter in it) as 1, 2 and 3 processes,
# untuned and tuned; every run must print verify=ok, and a result spoiled
# on purpose (SPLASH_CORRUPT=1) must give verify=FAIL and status 1.  This
# checks the kernels' partitioning and synchronisation; the board itself
# is tested in the VM (selftests/splash/).
set -uo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
O=${1:-${LIBDLM_O:-$top/build}}
bin=$O/bench/splash
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 fail=0
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Open MPI: no binding (oversubscribed), shared memory only.
# shellcheck disable=SC2054 # a comma in an option's value
mpirun=(mpirun.openmpi --oversubscribe --bind-to none --mca btl self,vader)

ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); echo "not ok $n - $*"; fail=1; }
skip() { n=$((n + 1)); echo "ok $n - $* # SKIP"; }

# verdict DESCRIPTION STATUS: ok when STATUS is 0 and $tmp/out says verify=ok.
verdict() {
	if [[ $2 == 0 ]] && grep -q '^RESULT .*verify=ok' "$tmp/out"; then
		ok "$1: $(grep -o 'board_writes=[0-9]*\|mpi_bytes=[0-9]*' "$tmp/out")"
	else
		notok "$1 (status $2)"
		sed 's/^/# /' "$tmp/out" | tail -15
	fi
}

# mock NODES PROG ARGS...: NODES processes of the mock build; status of the worst.
mock() {
	local np=$1 i rc=0 pids=()
	shift
	rm -f "$tmp/region"
	for ((i = 0; i < np; i++)); do
		AWG_MOCK_NODE=$i AWG_MOCK_NODES=$np timeout 120 "$@" \
			--device "$tmp/region" >>"$tmp/out" 2>&1 &
		pids+=($!)
	done
	for i in "${pids[@]}"; do
		wait "$i" || rc=$?
	done
	return "$rc"
}

echo "TAP version 13"
echo "1..30"

help_ok() {
	local p
	for p in radix_awg lu_awg fft_awg; do
		"$bin/$p" --help | grep -q "^Usage: $p" || return 1
	done
	if [[ -x $bin/radix_mpi ]]; then
		for p in radix_mpi lu_mpi fft_mpi; do
			"$bin/$p" --help | grep -q "^Usage: $p" || return 1
		done
	fi
	! "$bin/lu_awg" --no-such-option 2>/dev/null
}
if help_ok >"$tmp/out" 2>&1; then ok "--help of every program, usage error on a bad option"
else notok "--help of every program"; fi

for k in radix lu fft; do
	for np in 1 2 3; do
		if [[ ! -x $bin/${k}_mpi ]] || ! command -v mpirun.openmpi >/dev/null; then
			skip "$k mpi, $np ranks: no Open MPI build (mpicc.openmpi)"
			continue
		fi
		: >"$tmp/out"
		timeout 120 "${mpirun[@]}" -np "$np" "$bin/${k}_mpi" >"$tmp/out" 2>&1
		verdict "$k mpi, $np ranks" $?
	done
done

for k in radix lu fft; do
	for np in 1 2 3; do
		for t in "" --tuned; do
			: >"$tmp/out"
			mock "$np" "$bin/mock/${k}_awg" $t
			verdict "$k awg${t:+ tuned} over awg_mock.c, $np processes" $?
		done
	done
done

: >"$tmp/out"
SPLASH_CORRUPT=1 mock 2 "$bin/mock/lu_awg"
rc=$?
if [[ $rc == 1 ]] && grep -q 'verify=FAIL' "$tmp/out"; then
	ok "a spoiled LU result (awg over the mock) gives verify=FAIL and status 1"
else
	notok "a spoiled LU result gives verify=FAIL and status 1 (status $rc)"
	sed 's/^/# /' "$tmp/out"
fi
if [[ -x $bin/fft_mpi ]] && command -v mpirun.openmpi >/dev/null; then
	SPLASH_CORRUPT=1 timeout 120 "${mpirun[@]}" -np 2 "$bin/fft_mpi" >"$tmp/out" 2>&1
	rc=$?
	if [[ $rc != 0 ]] && grep -q 'verify=FAIL' "$tmp/out"; then
		ok "a spoiled FFT result (mpi) gives verify=FAIL and a non-zero status"
	else
		notok "a spoiled FFT result (mpi) gives verify=FAIL (status $rc)"
		sed 's/^/# /' "$tmp/out"
	fi
else
	skip "a spoiled FFT result (mpi): no Open MPI build"
fi
exit $fail
