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

# asan_timeouts: under make check-asan (dlmd linked with AddressSanitizer,
# which records every allocation's whole stack there, as
# scripts/lsan-mpi.supp needs) Open MPI took up to 1.9 s for one 1 MB page,
# near dlmd's I/O timeout (half of the module's request_timeout_ms, default
# 5 s), and a job ended in SIGBUS now and then.  There, give requests 20 s
# until asan_timeouts_restore (call it from the test's EXIT trap).
asan_timeouts() {
	rto_param=/sys/module/dlmem/parameters/request_timeout_ms
	rto_was=
	with_asan "$bin/dlmd" || return 0
	rto_was=$(cat "$rto_param")
	echo 20000 >"$rto_param"
	echo "# dlmd is built with AddressSanitizer: request_timeout_ms 20000 for this test (was $rto_was)"
}

asan_timeouts_restore() {
	[[ -z ${rto_was:-} ]] || echo "$rto_was" >"$rto_param"
}
