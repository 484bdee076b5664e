#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-dlmctl.sh - dlmctl status and stats against a fake sysfs directory
# (the real one is exercised in the VM by remote_test.sh).  TAP.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
ctl=${DLM_BUILD:-$top/build}/bin/dlmctl
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); echo "not ok $n - $*"; fail=1; }
check() {	# check DESC CONDITION-COMMAND...
	local desc=$1
	shift
	if "$@"; then ok "$desc"; else notok "$desc"; fi
}

echo "TAP version 13"
echo "1..8"
s=$tmp/sys
mkdir -p "$s/stats"
echo 0 >"$s/daemon"; echo 1 >"$s/spaces"; echo 768 >"$s/frames"
for c in faults populates sigbus swapins swapouts drops readaheads \
	 readaheads_unused store_waits lost bytes_in bytes_out same_filled fills_reused \
	 held_skips; do
	echo $((${#c} * 11)) >"$s/stats/$c"
done
echo "40 2500000 2097151 3145727 4194303 4500000" >"$s/stats/lat_data"
echo "0 0 0 0 0 0" >"$s/stats/lat_map"
cat >"$tmp/dlmd.json" <<'J'
{
  "uptime_s": 3.5,
  "servers": []
}
J

out=$("$ctl" -s "$s" --daemon-stats "$tmp/dlmd.json" status)
check "status: no daemon, spaces and frames shown" \
	grep -q "daemon  *none (start dlmd" <<<"$out"
check "status: frames and the daemon's stats file" \
	bash -c '[[ $1 == *"local frames      768"* && $1 == *"\"uptime_s\": 3.5"* ]]' _ "$out"
out=$("$ctl" -s "$s" --daemon-stats "$tmp/none" stats)
check "stats: every counter printed" \
	bash -c '[[ $1 == *"swapouts          88"* && $1 == *"readaheads        110"* && $1 == *"readaheads_unused 187"* && $1 == *"bytes_out         99"* && $1 == *"same_filled       121"* && $1 == *"fills_reused      132"* && $1 == *"held_skips        110"* ]]' _ "$out"
check "stats: latency in microseconds (p50 2097.2, max 4500.0)" \
	grep -Eq "request -> data in +40 +2500.0 +2097.2 +3145.7 +4194.3 +4500.0" <<<"$out"
check "stats: a missing daemon stats file names --stats-file" \
	grep -q "start dlmd with --stats-file $tmp/none" <<<"$out"
check "stats --json is valid JSON with the daemon's object" \
	bash -c '"$1" -s "$2" --daemon-stats "$3" -j stats | python3 -c "import json,sys; d=json.load(sys.stdin); sys.exit(not (d[\"lat_data\"][\"p99_ns\"] == 4194303 and d[\"dlmd\"][\"uptime_s\"] == 3.5))"' \
	_ "$ctl" "$s" "$tmp/dlmd.json"
"$ctl" -s "$tmp/absent" stats >/dev/null 2>"$tmp/err"
rc=$?
check "no module: exit 1, the message names modprobe" \
	bash -c '[[ $1 == 1 ]] && grep -q "modprobe dlmem" "$2"' _ "$rc" "$tmp/err"
"$ctl" -s "$s" frobnicate >/dev/null 2>&1
check "unknown command: exit 2" test $? == 2
exit $fail
