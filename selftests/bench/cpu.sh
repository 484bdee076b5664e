#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# cpu.sh [PERCENT] [ROUNDS] - where the CPUs go while Himeno pages through
# /dev/dlm: ROUNDS times (default 3), the Himeno-style benchmark at PERCENT
# local memory (default 7) over tcp (dlmd + two dlm-memservers on
# 127.0.0.1, 128 KB DLM pages) once under each CPU policy of SCHEDS
# (default "batch normal": dlmd and dlm-memserver --sched), then the same
# run all-local, and for each run, from the kernel's own accounting:
#
#   busy, idle   CPU time used and left idle on all CPUs (/proc/stat)
#   run, wait    time tasks ran and time runnable tasks waited for a CPU
#                (/proc/schedstat, /proc/PID/task/TID/schedstat; in the
#                kernel's sched_clock, which under TCG may run apart from
#                the wall clock: compare them with each other)
#   by thread    run and wait of dlmd's netlink thread (dlmd-netlink), its
#                tcp receivers (tcpS-*-rx) and senders (tcpS-*-tx), the
#                memory servers' connection threads (msrv-client), and the
#                rest (the program, kernel workers)
#
# Every dlm run must reproduce the all-local residual bit for bit.
# Run as root in the VM:  vm-images/vm-run -- selftests/bench/cpu.sh
# (make bench-cpu).  Writes OUT/cpu.csv and OUT/cpu.txt (OUT:
# $DLM_BENCH_OUT, default build/results/bench).  Progress on stderr.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
bin=${DLM_BUILD:-$top/build}
out=${DLM_BENCH_OUT:-$bin/results/bench}
pct=${1:-7}
rounds=${2:-3}
read -ra scheds <<<"${SCHEDS:-batch normal}"
hsize=${HIMENO_SIZE:-97x97x193}
hiters=${HIMENO_ITERS:-2}
hpage=${HIMENO_PAGE_KB:-128}
per_run_timeout=${RUN_TIMEOUT:-900}
himeno=$bin/bench/himeno
[[ $pct =~ ^[1-9][0-9]?$ ]] || { echo "cpu.sh: PERCENT must be 1-99" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "cpu.sh: ROUNDS must be a positive integer" >&2; exit 2; }
for p in "${scheds[@]}"; do
	[[ $p == batch || $p == normal ]] ||
		{ echo "cpu.sh: SCHEDS '$p': use batch and/or normal" >&2; exit 2; }
done
((${#scheds[@]})) || { echo "cpu.sh: SCHEDS is empty" >&2; exit 2; }
tmp=$(mktemp -d)
pids=()
job=

say() { echo "cpu.sh: $*" >&2; }
# shellcheck source=selftests/bench/lib.sh
. "$top/selftests/bench/lib.sh"

trap stop_all EXIT

need_root
mkdir -p "$out"
load_dlmem

# snap FILE: the counters, read with shell builtins only (a fork costs
# milliseconds of CPU under TCG and would blur what is measured).
snap() {
	local l p t k r
	{
		read -r l </proc/stat
		echo "$l"
		while read -r l; do
			[[ $l == cpu[0-9]* ]] && echo "sched $l"
		done </proc/schedstat
		for p in "${pids[@]}" $job; do
			for t in /proc/"$p"/task/*; do
				read -r k <"$t/comm" 2>/dev/null || continue
				read -r r <"$t/schedstat" 2>/dev/null || continue
				echo "task ${t##*/} $k $r"
			done
		done
	} >"$1"
}

# run KIND ROUND CMD...: one Himeno run between two snapshots.
run() {
	local kind=$1 round=$2 line rc=0
	shift 2
	snap "$tmp/$kind.$round.a"
	line=$(timeout "$per_run_timeout" "$@" 2>>"$tmp/progress") || rc=$?
	snap "$tmp/$kind.$round.b"
	if ((rc != 0)) || [[ $line != *"bad=0"* ]]; then
		say "  $kind round $round FAILED (status $rc): $line"
		tail -3 "$tmp/progress" >&2
		exit 1
	fi
	echo "$line" >"$tmp/$kind.$round.line"
	say "  $kind round $round: $line"
}

# start SCHED: two memory servers and dlmd under --sched SCHED.
start() {
	local port
	pids=()
	for port in 7311 7312; do
		"$bin/bin/dlm-memserver" --listen 127.0.0.1:$port --size 200 \
			--log-level warn --sched "$1" &
		pids+=($!)
	done
	sleep 1
	"$bin/bin/dlmd" -f "$tmp/tcp.mem" --sched "$1" 2>"$tmp/dlmd.log" &
	job=$!
	wait_registered tcp || exit 1
}

printf '200\n200 127.0.0.1:7311\n200 127.0.0.1:7312\n' >"$tmp/tcp.mem"
line=$("$himeno" -s "$hsize" -n "$hiters" -m malloc)
himeno_ref "$line" || { say "the all-local himeno run failed: $line"; exit 1; }
himeno_budget_ok "$pct"
hlocal=$(mb_of "$pct")
printf '%s\n%s\n%s\n' "$hlocal" 100 100 >"$tmp/himeno.mem"
say "himeno $hsize, $hiters sweeps, ${hpage} KB DLM pages, $hlocal MB local ($pct%); daemons --sched ${scheds[*]}; $rounds rounds"
for ((r = 1; r <= rounds; r++)); do
	for p in "${scheds[@]}"; do
		start "$p"
		run "dlm-$p" "$r" "$himeno" -s "$hsize" -n "$hiters" -c "$hgosa" \
			-m dlm -- -f "$tmp/himeno.mem" --page-kb="$hpage"
		stop_servers	# dlmd, then the memory servers
	done
	run local "$r" "$himeno" -s "$hsize" -n "$hiters" -c "$hgosa" -m malloc
done

/usr/bin/python3 - "$tmp" "$rounds" "$pct" "$out" "$hsize" "$hpage" "${scheds[@]}" <<'PY'
import re, statistics, sys

tmp, rounds, pct, out, hsize, hpage = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]
kinds = ['dlm-' + p for p in sys.argv[7:]] + ['local']
GROUPS = (('netlink', re.compile(r'dlmd-netlink$')), ('tcp-rx', re.compile(r'tcp\d+-.*-rx$')),
          ('tcp-tx', re.compile(r'tcp\d+-.*-tx$')), ('msrv', re.compile(r'msrv-client$')))

def load(path):
    s = {'tasks': {}, 'run': 0, 'wait': 0}
    for l in open(path):
        f = l.split()
        if f[0] == 'cpu':
            t = list(map(int, f[1:]))
            s['busy'] = sum(t[:8]) - t[3] - t[4]
            s['idle'] = t[3] + t[4]
        elif f[0] == 'sched':
            s['run'] += int(f[8])
            s['wait'] += int(f[9])
        elif f[0] == 'task':
            s['tasks'][f[1]] = (f[2], int(f[3]), int(f[4]))
    return s

def delta(kind, r):
    a, b = load(f'{tmp}/{kind}.{r}.a'), load(f'{tmp}/{kind}.{r}.b')
    line = open(f'{tmp}/{kind}.{r}.line').read()
    d = {'run_s': float(re.search(r'run_s=([0-9.]+)', line).group(1)),
         'busy': b['busy'] - a['busy'], 'idle': b['idle'] - a['idle'],
         'run': (b['run'] - a['run']) / 1e6, 'wait': (b['wait'] - a['wait']) / 1e6}
    g = {n: [0.0, 0.0] for n, _ in GROUPS}
    for tid, (comm, run, wait) in b['tasks'].items():
        r0, w0 = a['tasks'].get(tid, (comm, 0, 0))[1:]
        for n, rx in GROUPS:
            if rx.match(comm):
                g[n][0] += (run - r0) / 1e6
                g[n][1] += (wait - w0) / 1e6
    d['groups'] = g
    d['rest'] = [d['run'] - sum(v[0] for v in g.values()), d['wait'] - sum(v[1] for v in g.values())]
    return d

rows = [(k, r, delta(k, r)) for r in range(1, rounds + 1) for k in kinds]
txt = [f'# cpu: himeno {hsize}, {hpage} KB DLM pages, tcp, {pct}% local vs all-local, {rounds} rounds',
       '# idle: share of CPU time left idle (/proc/stat); run/wait: ms tasks ran / waited for a CPU (schedstat)',
       f"{'run':<16}{'run_s':>7}{'x local':>8}{'idle':>6}{'run':>8}{'wait':>7}"
       + ''.join(f'{n + " r/w":>15}' for n, _ in GROUPS) + f"{'rest r/w':>15}"]
csv = ['kind,round,run_s,ratio,idle_pct,run_ms,wait_ms,' + ','.join(f'{n}_run_ms,{n}_wait_ms' for n, _ in GROUPS + (('rest', None),))]
loc = {r: d['run_s'] for k, r, d in rows if k == 'local'}
ratios = {k: [] for k in kinds if k != 'local'}
for k, r, d in rows:
    ratio = d['run_s'] / loc[r]
    if k in ratios:
        ratios[k].append(ratio)
    idle = 100.0 * d['idle'] / max(1, d['idle'] + d['busy'])
    gs = [d['groups'][n] for n, _ in GROUPS] + [d['rest']]
    txt.append(f"{k + ' ' + str(r):<16}{d['run_s']:>7.2f}{ratio:>8.2f}{idle:>5.0f}%{d['run']:>8.0f}{d['wait']:>7.0f}"
               + ''.join(f'{v[0]:>8.0f}/{v[1]:<6.0f}' for v in gs))
    csv.append(f"{k},{r},{d['run_s']},{ratio:.3f},{idle:.1f},{d['run']:.1f},{d['wait']:.1f},"
               + ','.join(f'{v[0]:.1f},{v[1]:.1f}' for v in gs))
for k, rs in ratios.items():
    txt.append(f'{k} at {pct}% / all-local, per round: ' + ' '.join(f'{x:.2f}' for x in rs)
               + f'; median {statistics.median(rs):.2f}')
open(f'{out}/cpu.txt', 'w').write('\n'.join(txt) + '\n')
open(f'{out}/cpu.csv', 'w').write('\n'.join(csv) + '\n')
print('\n'.join(txt))
PY
