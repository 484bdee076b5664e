# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# shellcheck disable=SC2154 # $rw and $tmp come from the sourcing test
#
# lib.sh - helpers of the MPI tests (sourced after selftests/daemon/lib.sh,
# which gives ok, notok, diag and $tmp; $rw is dlm_rw).

# registered LOG PID: wait up to 90 s for dlmd's rank 0 to log that it
# registered with the kernel; 1 if PID (mpirun) ended first.
registered() {
	local i
	for ((i = 0; i < 900; i++)); do
		grep -q 'msg="registered"' "$1" && return 0
		kill -0 "$2" 2>/dev/null || break
		sleep 0.1
	done
	grep -q 'msg="registered"' "$1"
}

# rank0_pid LOG: the pid rank 0 logged when it started.
rank0_pid() {
	sed -n 's/.*prog=dlmd msg="starting".* pid=\([0-9]*\).*/\1/p' "$1"
}
