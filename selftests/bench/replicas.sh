#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# replicas.sh [ARRAY_MB] [ITERATIONS] [PERCENT...] - the cost of keeping
# every stored DLM page on two memory servers (dlmd --replicas 2), in one
# run: the STREAM-style triad (bench/stream -m dlm, three arrays of
# ARRAY_MB, default 32) at local ratios PERCENT (default 10 25 50) with
# the same two dlm-memservers on 127.0.0.1, first as two servers
# (--replicas 1, pages spread over both), then as one mirrored pair
# (--replicas 2, every store written to both), and the all-local run for
# reference.  The triad mostly reads (b and c are never written, so their
# victims are dropped, not stored); a write-heavy case follows: dlm_rw
# writing and checking a space of three arrays' size twice, where every
# eviction is a store.  Prints a table with the ratios replicated /
# unreplicated and writes OUT/replicas.csv (OUT: $DLM_BENCH_OUT, default
# build/results/bench).
# Run as root in the VM:  vm-images/vm-run -- selftests/bench/replicas.sh
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
bin=${DLM_BUILD:-$top/build}
out=${DLM_BENCH_OUT:-$bin/results/bench}
mb=${1:-32}
iters=${2:-3}
shift $(($# >= 2 ? 2 : $#))
pcts=("$@")
((${#pcts[@]})) || pcts=(10 25 50)
stream=$bin/bench/stream
tmp=$(mktemp -d)
pids=()
dlmd=

say() { echo "replicas.sh: $*" >&2; }
cleanup() {
	kill "${pids[@]}" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
# shellcheck source=selftests/bench/lib.sh
. "$top/selftests/bench/lib.sh"
check_args
need_root
mkdir -p "$out"
csv=$out/replicas.csv
echo "replicas,local_pct,triad_mbs,triad_s,status" >"$csv"

load_dlmem
srvmb=$((3 * mb + 8))
for port in 7301 7302; do
	"$bin/bin/dlm-memserver" --listen 127.0.0.1:$port --size "$srvmb" \
		--log-level warn &
	pids+=($!)
done
sleep 1
printf '%s\n%s 127.0.0.1:7301\n%s 127.0.0.1:7302\n' "$srvmb" "$srvmb" \
	"$srvmb" >"$tmp/memfile"

# run LABEL PCT CMD...: one stream run into the CSV.
run() {
	local label=$1 pct=$2 line
	shift 2
	say "triad, $label, $pct% local ..."
	if ! line=$(timeout "${RUN_TIMEOUT:-900}" "$@" 2>>"$tmp/progress") ||
	   [[ $line != *"bad=0"* ]]; then
		say "  FAILED: $line"
		echo "$label,$pct,,,failed" >>"$csv"
		return
	fi
	sed -n "s/.*triad_mbs=\([0-9.]*\) triad_s=\([0-9.]*\).*/$label,$pct,\1,\2,ok/p" \
		<<<"$line" >>"$csv"
	say "  $line"
}

# rwrun LABEL PCT: dlm_rw, write then check every word, twice; seconds.
rwrun() {
	local label=$1 pct=$2 t0 t1 line
	say "write-heavy (dlm_rw), $label, $pct% local ..."
	t0=$(date +%s%N)
	if ! line=$(timeout "${RUN_TIMEOUT:-900}" "$bin/selftests/remote/dlm_rw" \
		-t $((3 * mb)) -b $(((3 * mb * pct + 99) / 100 * 1024)) -p 1024 -r 2 2>&1) ||
	   [[ $line != *"bad=0"* ]]; then
		say "  FAILED: $line"
		echo "rw-$label,$pct,,,failed" >>"$csv"
		return
	fi
	t1=$(date +%s%N)
	echo "rw-$label,$pct,,$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'),ok" >>"$csv"
	say "  $(tr '\n' ' ' <<<"$line")"
}

run local 100 "$stream" -m malloc -s "$mb" -i "$iters"
for r in 1 2; do
	"$bin/bin/dlmd" -f "$tmp/memfile" --replicas "$r" --log-level warn &
	dlmd=$!
	until [[ $(cat /sys/class/misc/dlm/daemon) != 0 ]]; do sleep 0.1; done
	for pct in "${pcts[@]}"; do
		run "$r" "$pct" "$stream" -m dlm -s "$mb" -l "$pct" -i "$iters"
		rwrun "$r" "$pct"
	done
	kill -TERM "$dlmd"
	wait "$dlmd" || true
	until [[ $(cat /sys/class/misc/dlm/daemon) == 0 ]]; do sleep 0.1; done
done

# table ONE TWO FIELD UNIT: per ratio, CSV column FIELD of the rows labelled
# ONE and TWO side by side, and their ratio TWO / ONE.
table() {
	local pct a b
	printf '%-8s %14s %14s %10s\n' "local %" "1 copy $4" "2 copies $4" "2 / 1"
	for pct in "${pcts[@]}"; do
		a=$(awk -F, -v l="$1" -v p="$pct" -v f="$3" '$1 == l && $2 == p && $5 == "ok" { print $f }' "$csv")
		b=$(awk -F, -v l="$2" -v p="$pct" -v f="$3" '$1 == l && $2 == p && $5 == "ok" { print $f }' "$csv")
		printf '%-8s %14s %14s %10s\n' "$pct" "${a:--}" "${b:--}" \
			"$(awk -v a="${a:-0}" -v b="${b:-0}" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", b / a; else print "-" }')"
	done
}

{
	echo "Triad through /dev/dlm, ${mb} MB arrays, 1 MB DLM pages, two dlm-memservers over TCP on 127.0.0.1"
	table 1 2 3 MB/s
	awk -F, '$1 == "local" && $5 == "ok" { printf "all-local triad: %s MB/s\n", $3 }' "$csv"
	echo
	echo "Write-heavy: dlm_rw writes and checks $((3 * mb)) MB twice (every eviction a store)"
	table rw-1 rw-2 4 s
} | tee "$out/replicas.txt"
