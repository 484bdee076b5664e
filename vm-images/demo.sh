#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# demo.sh - run inside the VM by `make demo`: load dlmem.ko, show what the
# device supports, run dlm-demo (a raw /dev/dlm space), then DLM itself:
# the DLM-MPI paper's matvec program with 1/8 of its data in local memory
# and the rest paged to two memory servers by dlmd over TCP (loopback),
# its result checked and its time compared with an all-local run; unload.
# If dlmem is already loaded (selftests/man/demo_test.sh) it is left
# loaded; if a dlmd is already registered with it, it refuses (status 1)
# before starting anything.  Exits non-zero if any step fails or a result
# is wrong.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${DLM_BUILD:-$top/build}/bin
N=${DEMO_N:-4000}		# matvec order: an N x N matrix of doubles
tmp=$(mktemp -d)
pids=()
loaded=
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait "${pids[@]}" 2>/dev/null || true
	if [[ -n $loaded ]]; then rmmod dlmem || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT

if [[ ! -d /sys/module/dlmem ]]; then
	insmod "${DLM_KO:-$top/kmod/dlmem.ko}"
	loaded=1
fi
if [[ $(cat /sys/class/misc/dlm/daemon) != 0 ]]; then
	echo "demo: a dlmd is already registered with the module; stop it first" >&2
	exit 1
fi
echo "== dlmctl info"
"$bin/dlmctl" info
echo "== dlm-demo"
"$bin/dlm-demo"

# memserver NAME MB: start a dlm-memserver of MB on a free loopback port;
# sets port to it.
memserver() {
	local i
	port=
	"$bin/dlm-memserver" --listen 127.0.0.1:0 --size "$2" \
		>/dev/null 2>"$tmp/$1.log" &
	pids+=($!)
	for ((i = 0; i < 100; i++)); do
		port=$(sed -n 's/.*msg="listening" addr=.*:\([0-9]*\) .*/\1/p' \
			"$tmp/$1.log" 2>/dev/null)
		[[ -z $port ]] || return 0
		sleep 0.1
	done
	echo "demo: dlm-memserver did not start:" >&2
	cat "$tmp/$1.log" >&2
	return 1
}

# run_matvec MEMFILE: matvec N with MEMFILE; checks the checksum against
# the exact sum, prints the seconds it took.
run_matvec() {
	local t0 t1 want
	want="matvec: N=$N checksum=$(((N * (N - 1) / 2) ** 2))"
	t0=$(date +%s.%N)
	"$bin/matvec" "$N" -- -f "$1" -v >"$tmp/out" 2>"$tmp/err" || {
		cat "$tmp/out" "$tmp/err" >&2
		return 1
	}
	t1=$(date +%s.%N)
	sed 's/^/  /' "$tmp/err" >&2
	if ! grep -qx "$want" "$tmp/out"; then
		echo "demo: wrong result: $(cat "$tmp/out"), want: $want" >&2
		return 1
	fi
	echo "  $(cat "$tmp/out") (exact)" >&2
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }'
}

mb=$(((N * N * 8 + (1 << 20) - 1) >> 20))
local_mb=$(((mb + 7) / 8))
echo "== matvec $N (the DLM-MPI paper's Fig. 3 program: $N x $N doubles, $((N * N * 8 >> 20)) MiB), all local"
printf '%d\n' $((mb + 8)) >"$tmp/local.memfile"
t_local=$(run_matvec "$tmp/local.memfile")

echo "== the same with ${local_mb} MB local, the rest on two memory servers (dlmd, TCP)"
memserver ms1 "$mb"
p1=$port
memserver ms2 "$mb"
p2=$port
printf '# local MB, then one line per memory server: MB and address\n%d\n%d 127.0.0.1:%d\n%d 127.0.0.1:%d\n' \
	"$local_mb" "$mb" "$p1" "$mb" "$p2" >"$tmp/memfile"
echo "memfile:"
sed 's/^/  /' "$tmp/memfile"
"$bin/dlmd" -f "$tmp/memfile" 2>"$tmp/dlmd.log" &
dlmd=$!
pids+=("$dlmd")
for ((i = 0; i < 100; i++)); do
	grep -q 'msg="registered"' "$tmp/dlmd.log" && break
	kill -0 "$dlmd" 2>/dev/null || break
	sleep 0.1
done
if ! grep -q 'msg="registered"' "$tmp/dlmd.log"; then
	echo "demo: dlmd did not register:" >&2
	cat "$tmp/dlmd.log" >&2
	exit 1
fi
t_remote=$(run_matvec "$tmp/memfile")
awk -v l="$t_local" -v r="$t_remote" -v m="$local_mb" 'BEGIN {
	printf "time: all local %.2f s; %d MB local, the rest remote %.2f s (%.1fx)\n",
		l, m, r, r / l }'
echo "== dlmctl stats (the module's counters since it was loaded)"
"$bin/dlmctl" stats | sed '/^dlmd stats /,$d'	# dlmd's: --stats-file
kill -TERM "$dlmd"
if ! wait "$dlmd"; then
	echo "demo: dlmd exited with an error:" >&2
	cat "$tmp/dlmd.log" >&2
	exit 1
fi
if [[ -n $loaded ]]; then
	echo "== kernel log"
	dmesg | grep dlmem
fi
echo "demo: OK"
