#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# protocols.sh [TOTAL_MB] [LOCAL_PERCENT] - the swap protocols side by side
# in one run: dlm_rw (sequential write + check of every word, 1 MB DLM
# pages) through dlmd and two dlm-memservers on 127.0.0.1, for SERIAL,
# CROSS and ASYNC, against the same work on an all-local space.  Run as
# root in the VM:  vm-images/vm-run -- selftests/bench/protocols.sh 64 10
# Prints a table; times are relative to all-local and to SERIAL.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
bin=${DLM_BUILD:-$top/build}
total=${1:-64}
pct=${2:-10}
budget_kb=$((total * 1024 * pct / 100 / 1024 * 1024))
tmp=$(mktemp -d)
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT

[[ -d /sys/module/dlmem ]] || insmod "${DLM_KO:-$top/kmod/dlmem.ko}"
for port in 7101 7102; do
	"$bin/bin/dlm-memserver" --listen 127.0.0.1:$port --size "$total" \
		--log-level warn &
	pids+=($!)
done
printf '%s\n%s 127.0.0.1:7101\n%s 127.0.0.1:7102\n' \
	$(((budget_kb / 1024) + 8)) "$total" "$total" >"$tmp/memfile"
sleep 1
"$bin/bin/dlmd" -f "$tmp/memfile" --log-level warn &
pids+=($!)
until [[ $(cat /sys/class/misc/dlm/daemon) != 0 ]]; do sleep 0.1; done

run() {	# run LABEL ARGS... -> seconds
	"$bin/selftests/remote/dlm_rw" -t "$total" -p 1024 -r 1 "$@" |
		sed -n 's/.*bad=0 seconds=\([0-9.]*\).*swapins=\([0-9]*\).*/\1 \2/p'
}

echo "# ${total} MB, 1 MB DLM pages, ${pct}% local (${budget_kb} KB), write+check, 1 round"
read -r t_local _ < <(run -l -b $((total * 1024)))
printf '%-10s %8s %8s %10s %10s\n' protocol seconds swapins vs_local vs_serial
printf '%-10s %8.3f %8s %10s %10s\n' all-local "$t_local" 0 1.00 -
t_serial=
for proto in serial cross async inline; do
	read -r t sw < <(run -b "$budget_kb" -x $proto)
	[[ -z $t_serial ]] && t_serial=$t
	awk -v p=$proto -v t="$t" -v s="$sw" -v l="$t_local" -v r="$t_serial" \
		'BEGIN { printf "%-10s %8.3f %8s %10.2f %10.2f\n", p, t, s, t / l, t / r }' 
done
