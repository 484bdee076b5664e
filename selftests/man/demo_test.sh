#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# demo_test.sh - the README's first command, `make demo`, runs
# vm-images/demo.sh in a VM; this runs the same script in the test VM
# (the module already loaded) and checks what it shows: dlm-demo's raw
# /dev/dlm space, then the paper's matvec all local and with 1/8 of its
# matrix local and the rest paged to two memory servers through dlmd,
# both with the exact checksum, pages swapped both ways, nothing lost,
# and dlmd gone afterwards; then that it refuses, touching nothing, while
# another dlmd is registered.  Needs root, dlmem.ko.  TAP output.
set -uo pipefail
KSFT_SKIP=4
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
bin=${DLM_BIN:-$top/build}
tmp=$(mktemp -d)
n=0 fail=0
other=		# the second dlmd of the last two tests
trap '[[ -z $other ]] || kill "$other" 2>/dev/null; rm -rf "$tmp"' EXIT

echo "TAP version 13"
if [[ $(id -u) != 0 || ! -c /dev/dlm ]]; then
	echo "1..0 # SKIP needs root and dlmem.ko loaded"
	exit $KSFT_SKIP
fi
if [[ $(cat /sys/class/misc/dlm/daemon) != 0 ]]; then
	echo "1..0 # SKIP another dlmd is registered"
	exit $KSFT_SKIP
fi
echo "1..7"
# shellcheck source=selftests/man/lib.sh
source "$here/lib.sh"
has() { grep -Eq "$1" "$tmp/out"; }

N=2000	# a 31 MB matrix: 4 MB local
DLM_BUILD=$bin DEMO_N=$N timeout 300 "$top/vm-images/demo.sh" >"$tmp/out" 2>&1
rc=$?
sed 's/^/# /' "$tmp/out"
want="matvec: N=$N checksum=$(((N * (N - 1) / 2) ** 2)) (exact)"

result "$((rc == 0))" "vm-images/demo.sh exits 0 (status $rc)"
has '^dlm-demo: OK$' && has 'filled and checked: 0 bad words'
result "$((!$?))" "dlm-demo: its space filled and read back, SIGBUS past the budget"
[[ $(grep -cxF "  $want" "$tmp/out") == 2 ]]
result "$((!$?))" "matvec all local and paged: both the exact checksum"
has 'local budget 4 MB, [0-9]+ MB on 2 memory server\(s\)' &&
	has 'shutdown: .* [1-9][0-9]* swapins, [1-9][0-9]* swapouts, 0 SIGBUS, 0 lost' &&
	has '^time: all local [0-9.]+ s; 4 MB local, the rest remote [0-9.]+ s'
result "$((!$?))" "matvec paged: 4 MB local, pages out to and back from 2 servers, none lost"
has '^demo: OK$' && [[ $(cat /sys/class/misc/dlm/daemon) == 0 ]] &&
	[[ -d /sys/module/dlmem ]]
result "$((!$?))" "dlmd stopped and unregistered, the module left loaded"

# Another dlmd (its one server unreachable: it registers all the same).
printf '8\n8 127.0.0.1:9\n' >"$tmp/memfile"
"$bin/bin/dlmd" -f "$tmp/memfile" 2>"$tmp/dlmd.log" &
other=$!
for ((i = 0; i < 100; i++)); do
	grep -q 'msg="registered"' "$tmp/dlmd.log" && break
	sleep 0.1
done
rc=	# demo.sh's status: not run unless the other dlmd registered
if grep -q 'msg="registered"' "$tmp/dlmd.log"; then
	DLM_BUILD=$bin DEMO_N=$N timeout 60 "$top/vm-images/demo.sh" \
		>"$tmp/out" 2>&1
	rc=$?
	sed 's/^/# /' "$tmp/out"
else
	sed 's/^/# dlmd: /' "$tmp/dlmd.log"
fi
[[ $rc == 1 ]] && has 'a dlmd is already registered with the module; stop it first' &&
	! has '^== ' && kill -0 "$other" 2>/dev/null &&
	[[ $(cat /sys/class/misc/dlm/daemon) != 0 ]]
result "$((!$?))" "refused (status $rc) while another dlmd is registered, which it left running"
kill -TERM "$other"
wait "$other"
rc=$?
other=
((rc == 0))
result "$((!$?))" "the other dlmd exits cleanly" "$(cat "$tmp/dlmd.log")"
exit $fail
