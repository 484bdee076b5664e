#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Native test of scripts/tap-summary: it must count what CI reports.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 fail=0

t() {	# t DESCRIPTION EXPECTED_LINE EXPECTED_RC
	local got rc
	got=$("$here/tap-summary" "$tmp" | tail -1)
	"$here/tap-summary" "$tmp" >/dev/null
	rc=$?
	n=$((n + 1))
	if [[ $got == "$2" && $rc == "$3" ]]; then
		echo "ok $n - $1"
	else
		echo "not ok $n - $1: got '$got' rc $rc, want '$2' rc $3"
		fail=1
	fi
	rm -f "$tmp"/*.tap
}

echo "TAP version 13"
echo "1..6"

printf 'TAP version 13\n1..3\nok 1 a\nnot ok 2 b\nok 3 c # SKIP no rdma\n' >"$tmp/a.tap"
t "counts pass, fail and skip" "1 passed, 1 failed, 1 skipped" 1

printf '1..2\nok 1 a\nok 2 b\n# ok 7 nested lines do not count\n' >"$tmp/a.tap"
printf '1..0 # SKIP no device\n' >"$tmp/b.tap"
t "several files, nested lines ignored, empty plan skip" \
	"2 passed, 0 failed, 1 skipped" 0

printf '1..5\nok 1 a\nok 2 b\n' >"$tmp/a.tap"
t "missing results of a crashed program fail" "2 passed, 3 failed, 0 skipped" 1

printf 'Segmentation fault\n' >"$tmp/a.tap"
t "no TAP at all is a failure" "0 passed, 1 failed, 0 skipped" 1

: >"$tmp/none.txt"
t "nothing run is not a pass" "0 passed, 0 failed, 0 skipped" 1

printf '1..1\nok 1 - x # skip lower-case directive\n' >"$tmp/a.tap"
t "skip directive is case-insensitive" "0 passed, 0 failed, 1 skipped" 1

exit $fail
