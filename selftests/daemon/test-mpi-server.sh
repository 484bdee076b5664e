#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-mpi-server.sh - a memory server rank of dlmd's mpi transport
# against a rank 0 written in the test (test-mpi-server-MPI, two ranks
# on this machine), with Open MPI and with MPICH, the server waiting both
# ways (--mpi-server-wait poll and sleep); then with each MPI a WRITE past
# the end of the server's memory, which must end the job (mpirun non-zero,
# the reason in the server's log) within the timeout.  An MPI not built is
# skipped.  TAP.
set -uo pipefail
# shellcheck source=selftests/daemon/lib.sh
. "$(dirname "$0")/lib.sh"

per=11	# tests in one run of test-mpi-server
echo "TAP version 13"
echo "1..$((2 * 2 * per + 2))"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for m in openmpi mpich; do
	for wait in poll sleep; do
		t=$tests/test-mpi-server-$m
		if [[ ! -x $t ]] || ! command -v "mpirun.$m" >/dev/null; then
			for ((i = 0; i < per; i++)); do
				skip "$m, server $wait: no $t or mpirun.$m"
			done
			continue
		fi
		launch=("mpirun.$m" -np 2)
		[[ $m == openmpi ]] && launch+=(--oversubscribe --bind-to none)
		echo "# $m, memory server rank waiting by $wait"
		TEST_MPI_SERVER_WAIT=$wait subtests "$per" \
			timeout 120 "${launch[@]}" "$t"
	done
done
for m in openmpi mpich; do
	t=$tests/test-mpi-server-$m
	if [[ ! -x $t ]] || ! command -v "mpirun.$m" >/dev/null; then
		skip "$m: a WRITE the server cannot store: no $t or mpirun.$m"
		continue
	fi
	launch=("mpirun.$m" -np 2)
	[[ $m == openmpi ]] && launch+=(--oversubscribe --bind-to none)
	start=$SECONDS
	out=$(TEST_MPI_SERVER_BADWRITE=1 timeout 120 "${launch[@]}" "$t" 2>&1)
	rc=$?
	if ((rc != 0 && rc != 124)) && [[ $out == *"cannot store a write"* ]]; then
		ok "$m: a WRITE past the server's memory ends the job, reason logged (mpirun exit $rc, $((SECONDS - start)) s)"
	else
		notok "$m: a WRITE past the server's memory: mpirun exit $rc, output: ${out//$'\n'/ | }"
	fi
done
exit "$fail"
