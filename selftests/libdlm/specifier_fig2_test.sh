#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# specifier_fig2_test.sh - the DLM-MPI paper's Fig. 2 program, built with
# plain cc (`dlm double a[N][N], x[N], y[N];`, no other change), run
# unmodified: in a local space, with memory servers (through
# selftests/remote/fake_dlmd.py, a test double of dlmd) at a quarter of
# its arrays' size, and the refusals when its arrays cannot be placed.
# Needs root, dlmem.ko with remote backing, python3, DLM_BIN.  TAP output.
set -uo pipefail
KSFT_SKIP=4
here=$(cd "$(dirname "$0")" && pwd)
bin=${DLM_BIN:-$here/../../build}
prog=$bin/bin/matvec-fig2
fake=$here/../remote/fake_dlmd.py
tmp=$(mktemp -d)
n=0 fail=0 daemon=
N=2000	# what userlib.mk builds: 32 MB of dlm arrays

echo "TAP version 13"
if [[ $(id -u) != 0 || ! -c /dev/dlm ]]; then
	echo "1..0 # SKIP needs root and dlmem.ko loaded"
	exit $KSFT_SKIP
fi
if [[ ! -x $prog ]]; then
	echo "1..0 # SKIP $prog not built (make user)"
	exit $KSFT_SKIP
fi
echo "1..6"

# shellcheck source=selftests/libdlm/lib.sh
source "$here/lib.sh"
trap 'stop_daemon; rm -rf "$tmp"' EXIT
want_line=$(want "$N")

run() {	# run ENV...: the program with only these DLM_* variables
	env -u DLM_MEMFILE -u DLM_LOCAL_MB -u DLM_PAGE_KB -u DLM_POLICY \
		-u DLM_VERBOSE "$@" timeout 300 "$prog" >"$tmp/out" 2>"$tmp/err"
}

# 1: local space large enough for the arrays
if run DLM_LOCAL_MB=40 DLM_VERBOSE=1 && grep -qx "$want_line" "$tmp/out" &&
   grep -q "DLM space of 40 MB" "$tmp/err" &&
   grep -Eq "exit: [1-9][0-9]* faults, .* 0 SIGBUS" "$tmp/err"; then
	ok "Fig. 2 program in a 40 MB local space: exact checksum, faults counted"
else
	notok "Fig. 2 program in a 40 MB local space"
fi
show "$tmp/out" "$tmp/err"

# 2: a space smaller than the arrays: refused before main(), status 127
run DLM_LOCAL_MB=16
rc=$?
if [[ $rc == 127 ]] && ! grep -q matvec "$tmp/out" &&
   grep -q "dlm arrays need 31 MB.*has 16 MB" "$tmp/err"; then
	ok "arrays larger than the space: exit 127 before main(), naming both sizes"
else
	notok "arrays larger than the space: got status $rc"
fi
show "$tmp/err"

# 3: remote memfile without dlmd: refused, no fallback to local memory
mf=$tmp/memfile
printf '# local MB\n8\n24 node1:7100\n32 node2:7100\n' >"$mf"
run DLM_MEMFILE="$mf"
rc=$?
if [[ $rc == 127 ]] && grep -q "start dlmd -f $mf" "$tmp/err"; then
	ok "remote memfile without dlmd: exit 127, saying to start dlmd"
else
	notok "remote memfile without dlmd: got status $rc"
fi
show "$tmp/err"

if ! start_daemon 32; then
	for _ in 4 5 6; do
		n=$((n + 1))
		echo "ok $n - remote parts # SKIP fake_dlmd.py did not register within 60 s"
	done
	exit $fail
fi

# 4-5: 8 MB local for 32 MB of arrays, both eviction policies
for policy in clock arr; do
	if run DLM_MEMFILE="$mf" DLM_POLICY=$policy DLM_VERBOSE=1 &&
	   grep -qx "$want_line" "$tmp/out" &&
	   grep -q "on 2 memory server(s)" "$tmp/err" &&
	   grep -Eq "exit: .* [1-9][0-9]* swapins, [1-9][0-9]* swapouts, 0 SIGBUS, 0 lost" "$tmp/err"; then
		ok "Fig. 2 program with 8 MB local for 32 MB of arrays ($policy): exact checksum through swaps"
	else
		notok "Fig. 2 program with 8 MB local for 32 MB of arrays ($policy)"
	fi
	show "$tmp/out" "$tmp/err"
done

# 6: the daemon is gone: refused again
stop_daemon
run DLM_MEMFILE="$mf"
rc=$?
if [[ $rc == 127 ]] && grep -q "start dlmd -f" "$tmp/err"; then
	ok "after dlmd exits: exit 127 again, no fallback to local"
else
	notok "after dlmd exits: got status $rc"
fi
show "$tmp/err"

exit $fail
