#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# wakeup.sh [PERCENT] [ROUNDS] - what a wake-up of another thread on the
# program's CPU costs the program on this machine, and how many of them
# each transport brings it.  In one VM run:
#
#   sleeper      all-local Himeno (HIMENO_SIZE, default 97x97x193, two
#                sweeps) on CPU 0, ROUNDS rounds (default 5) of: alone;
#                beside a sleeper on CPU 0 (a process that sleeps WAKE_US,
#                default 1000, in a loop) under SCHED_OTHER, so that each
#                wake-up preempts Himeno; the same under SCHED_BATCH, as
#                the daemons run (it waits for a tick).  The price of a
#                switch: Himeno's extra time over its extra context
#                switches (getrusage: voluntary plus involuntary).
#   transports   Himeno at PERCENT local (default 7; 128 KB DLM pages,
#                HIMENO_PAGE_KB) over each of TRANSPORTS (default "tcp
#                openmpi mpich"; tcp: dlmd + two dlm-memservers on
#                127.0.0.1, MPI: mpirun -np 3 dlmd), ROUNDS runs each, with
#                Himeno's context switches (and of them the involuntary
#                ones, where another thread took its CPU); each
#                transport's extra switches over tcp's, at the SCHED_OTHER
#                price, against its extra time over tcp's
#
# Every run must reproduce the all-local residual bit for bit.  Under TCG
# a wake-up costs the program about a tenth of a millisecond of emulated
# interrupt and scheduler work; on hardware, microseconds.  Run as root
# in the VM:  vm-images/vm-run -- selftests/bench/wakeup.sh (make
# bench-wakeup).  Writes OUT/wakeup.csv and OUT/wakeup.txt (OUT:
# $DLM_BENCH_OUT, default build/results/bench).  Progress on stderr.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
bin=${DLM_BUILD:-$top/build}
out=${DLM_BENCH_OUT:-$bin/results/bench}
pct=${1:-7}
rounds=${2:-5}
wake_us=${WAKE_US:-1000}
read -ra transports <<<"${TRANSPORTS:-tcp openmpi mpich}"
hsize=${HIMENO_SIZE:-97x97x193}
hiters=${HIMENO_ITERS:-2}
hpage=${HIMENO_PAGE_KB:-128}
per_run_timeout=${RUN_TIMEOUT:-900}
himeno=$bin/bench/himeno
sleeper=$bin/bench/sleeper
[[ $pct =~ ^[1-9][0-9]?$ ]] || { echo "wakeup.sh: PERCENT must be 1-99" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "wakeup.sh: ROUNDS must be a positive integer" >&2; exit 2; }
if [[ ! $wake_us =~ ^[1-9][0-9]{0,7}$ ]] || ((wake_us > 10000000)); then
	echo "wakeup.sh: WAKE_US must be 1-10000000 (microseconds)" >&2
	exit 2
fi
for t in "${transports[@]}"; do
	[[ $t == tcp || $t == openmpi || $t == mpich ]] ||
		{ echo "wakeup.sh: TRANSPORTS '$t': use tcp, openmpi and/or mpich" >&2; exit 2; }
done
for p in "$himeno" "$sleeper"; do
	[[ -x $p ]] || { echo "wakeup.sh: $p is missing: run make all first" >&2; exit 2; }
done
tmp=$(mktemp -d)
pids=()
job=

say() { echo "wakeup.sh: $*" >&2; }
# shellcheck source=selftests/bench/lib.sh
. "$top/selftests/bench/lib.sh"

trap stop_all EXIT

need_root
mkdir -p "$out"
load_dlmem
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
csv=$out/wakeup.csv
echo "kind,label,run_s,switches,voluntary,involuntary,user_s,sys_s" >"$csv"

# run KIND LABEL CMD...: one Himeno run, its time and context switches
# (the rusage of the process, read by wait4: voluntary ones, where it
# waited, e.g. for a page, and involuntary ones, where another thread took
# its CPU) into the CSV; output in $last.
run() {
	local kind=$1 label=$2 line rc=0 vol inv us ss
	shift 2
	last=
	# wait4 gives the usage of timeout and of what it waited for: Himeno
	# (taskset execs it) and timeout's own one or two switches.
	line=$(/usr/bin/python3 -c '
import os, subprocess, sys
p = subprocess.Popen(sys.argv[2:])
_, st, ru = os.wait4(p.pid, 0)
with open(sys.argv[1], "w") as f:
    f.write(f"{ru.ru_nvcsw} {ru.ru_nivcsw} {ru.ru_utime:.3f} {ru.ru_stime:.3f}\n")
sys.exit(os.waitstatus_to_exitcode(st))' "$tmp/ru" \
		timeout "$per_run_timeout" "$@" 2>>"$tmp/progress") || rc=$?
	if ((rc != 0)) || [[ $line != *"bad=0"* ]]; then
		say "$kind $label: FAILED (status $rc): $line"
		tail -3 "$tmp/progress" >&2
		return 1
	fi
	read -r vol inv us ss <"$tmp/ru"
	last=$line
	line=$(sed -n 's/.*run_s=\([0-9.]*\).*/\1/p' <<<"$line")
	echo "$kind,$label,$line,$((vol + inv)),$vol,$inv,$us,$ss" >>"$csv"
	say "$kind $label: run_s=$line switches=$((vol + inv)) (involuntary $inv) user_s=$us sys_s=$ss"
}

# ---- all-local reference and the sleeper beside it -------------------------------
run local ref "$himeno" -s "$hsize" -n "$hiters" -m malloc
himeno_ref "$last" || { say "the all-local himeno run failed"; exit 1; }
hrun=("$himeno" -s "$hsize" -n "$hiters" -c "$hgosa")
himeno_budget_ok "$pct"
srvmb=$(($(mb_of 100) + 8))

for ((r = 1; r <= rounds; r++)); do
	say "round $r of $rounds: all-local Himeno on CPU 0, alone and beside a $wake_us us sleeper"
	run sleeper alone taskset -c 0 "${hrun[@]}" -m malloc || true
	for pol in other batch; do
		taskset -c 0 chrt "--$pol" 0 "$sleeper" "$wake_us" &
		pids+=($!)
		sleep 0.3
		if ! kill -0 "${pids[-1]}" 2>/dev/null; then
			say "the sleeper under chrt --$pol did not start"
			exit 1
		fi
		run sleeper "$pol" taskset -c 0 "${hrun[@]}" -m malloc || true
		stop_servers
	done
done

# ---- Himeno at PCT% over each transport -------------------------------------------
pin=()	# start_dlmd's taskset: none
printf '%s\n%s\n%s\n' "$(mb_of "$pct")" "$(mb_of 100)" "$(mb_of 100)" >"$tmp/himeno.mem"
for tr in "${transports[@]}"; do
	if [[ $tr != tcp ]] && ! command -v "mpirun.$tr" >/dev/null; then
		say "$tr: mpirun.$tr not installed (make deps); left out"
		continue
	fi
	say "$tr: Himeno at $pct% local, $rounds runs"
	start_dlmd "$tr" || continue
	for ((r = 1; r <= rounds; r++)); do
		run dlm "$tr" "${hrun[@]}" -m dlm -- -f "$tmp/himeno.mem" --page-kb="$hpage" || true
	done
	stop_servers
	rm -f "$tmp/tcp.mem"	# its memory servers are gone
done

/usr/bin/python3 - "$csv" "$pct" "$wake_us" <<'PY' | tee "$out/wakeup.txt"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
pct, wake = sys.argv[2], sys.argv[3]

def med(kind, label, key):
    v = [float(r[key]) for r in rows if r['kind'] == kind and r['label'] == label]
    return (statistics.median(v), len(v)) if v else (None, 0)

t0, n = med('sleeper', 'alone', 'run_s')
s0, _ = med('sleeper', 'alone', 'switches')
if t0 is None:
    sys.exit("no all-local run on CPU 0 succeeded: see the progress above")
print(f"all-local Himeno on CPU 0, medians of {n}: alone {t0:.3f} s, {s0:.0f} switches")
print(f"{'beside':<28}{'time s':>8}{'x alone':>9}{'switches':>10}{'extra':>7}{'ms each':>9}")
price = None
for label, what in (('other', f'a {wake} us sleeper, SCHED_OTHER'),
                    ('batch', f'a {wake} us sleeper, SCHED_BATCH')):
    t, _ = med('sleeper', label, 'run_s')
    s, _ = med('sleeper', label, 'switches')
    if t is None:
        continue
    extra = s - s0
    each = (t - t0) / extra * 1000 if extra > 0 else float('nan')
    if label == 'other':
        price = each
    print(f"{what:<28}{t:8.3f}{t / t0:9.2f}{s:10.0f}{extra:7.0f}{each:9.3f}")
print()
print(f"Himeno at {pct}% local, medians (price of a switch: "
      + (f"{price:.3f} ms)" if price else "not measured)"))
print(f"{'transport':<11}{'n':>3}{'time s':>8}{'switches':>10}{'invol.':>8}{'extra':>7}"
      f"{'extra s':>9}{'est. s':>8}{'share':>7}")
tt, _ = med('dlm', 'tcp', 'run_s')
ts, _ = med('dlm', 'tcp', 'switches')
for tr in ('tcp', 'openmpi', 'mpich'):
    t, k = med('dlm', tr, 'run_s')
    s, _ = med('dlm', tr, 'switches')
    i, _ = med('dlm', tr, 'involuntary')
    if t is None:
        continue
    if tr == 'tcp' or tt is None or price is None:
        print(f"{tr:<11}{k:3d}{t:8.3f}{s:10.0f}{i:8.0f}")
        continue
    est = (s - ts) * price / 1000
    gap = t - tt
    share = f"{est / gap:7.2f}" if gap > 0 else f"{'-':>7}"
    print(f"{tr:<11}{k:3d}{t:8.3f}{s:10.0f}{i:8.0f}{s - ts:7.0f}{gap:9.3f}{est:8.3f}{share}")
print("(invol.: involuntary switches, another thread took Himeno's CPU; extra: switches over tcp's;")
print(" extra s: time over tcp's; est. s: the extra switches at the price above; share: est. s over extra s)")
PY
