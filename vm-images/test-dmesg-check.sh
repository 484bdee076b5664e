#!/bin/bash
# test-dmesg-check.sh - native (no VM) tests for vm-images/dmesg-check.
# Prints TAP; exits 1 if any test fails.
set -euo pipefail

here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd -P)
check=$here/dmesg-check
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

n=0
failed=0
ok() {
	n=$((n + 1))
	echo "ok $n - $1"
}
not_ok() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - $1"
	if [ -s "$tmp/out" ]; then
		sed 's/^/# /' "$tmp/out"
	fi
}

# A clean boot: real lines from the Debian 6.1/6.12 kernels under
# virtme-ng, plus benign lines of debug kernels that mention the same
# words as the patterns.
clean_log() {
	cat <<'EOF'
[    0.000000] Linux version 6.1.0-56-amd64 (debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14+deb12u1) 12.2.0) #1 SMP PREEMPT_DYNAMIC Debian 6.1.192-2
[    0.000000] Command line: console=ttyS0 panic=-1 hung_task_panic=1 softlockup_panic=1 panic_on_warn=1 kasan.fault=panic prove_locking lockdep
[    0.103299] Kernel command line: console=ttyS0 panic=-1 hung_task_panic=1 softlockup_panic=1 panic_on_warn=1 WARNING: BUG: Oops
[    0.216879] rcu: Preemptible hierarchical RCU implementation.
[    0.216880] rcu: 	RCU lockdep checking is enabled.
[    0.217081] 	Trampoline variant of Tasks RCU enabled.
[    0.217190] rcu: RCU calculated value of scheduler-enlistment delay is 25 jiffies.
[    0.217200] rcu: 	RCU CPU stall warnings timeout set to 21 (rcu_cpu_stall_timeout).
[    0.250000] RCU Tasks Trace: Setting shift to 1 and lim to 1 rcu_task_cb_adjust=1 rcu_task_cpu_ids=2.
[    0.300000] Lock dependency validator: Copyright (c) 2006 Red Hat, Inc., Ingo Molnar
[    0.300001] ... MAX_LOCKDEP_SUBCLASSES:  8
[    0.300002] ... MAX_LOCKDEP_KEYS:        8192
[    0.310000] kasan: KernelAddressSanitizer initialized
[    0.320000] kmemleak: Kernel memory leak detector initialized (mem pool available: 15678)
[    0.320001] kmemleak: Automatic memory scanning thread started
[    0.642058] NMI watchdog: Perf NMI watchdog permanently disabled
[    0.990067] PCI: Using host bridge windows from ACPI; if necessary, use "pci=nocrs" and report a bug
[    1.589516] AMD-Vi: AMD IOMMUv2 functionality not available on this system - This is not a bug.
[    2.085688] Unstable clock detected, switching default tracing clock to "global"
[    2.085689]                  "trace_clock=local"
[    5.000000] traps: a.out[1234] general protection fault ip:401126 sp:7ffc8a4b1e40 error:0 in a.out[401000+1000]
[   13.000000] dlmem: loading out-of-tree module taints kernel.
[   13.000001] dlmem: module verification failed: signature and/or required key missing - tainting kernel
[   13.146481] virtme-ng-init: udev is done
[   13.159949] virtme-ng-init: starting script
EOF
}

# label<TAB>a line the kernel prints for it
dirty_cases() {
	cat <<'EOF'
Oops	[   20.100000] Oops: 0002 [#1] PREEMPT SMP NOPTI
BUG:	[   20.100000] BUG: kernel NULL pointer dereference, address: 0000000000000000
kernel BUG	[   20.100000] kernel BUG at mm/slub.c:379!
WARNING:	[   20.100000] WARNING: CPU: 0 PID: 1 at drivers/misc/dlmem.c:42 dlmem_init+0x1a/0x30 [dlmem]
Call Trace	[   20.100000] Call Trace:
general protection fault	[   20.100000] general protection fault, probably for non-canonical address 0xdead000000000100: 0000 [#1] PREEMPT SMP NOPTI
possible recursive locking	[   20.100000] WARNING: possible recursive locking detected
possible circular locking	[   20.100000] WARNING: possible circular locking dependency detected
inconsistent lock state	[   20.100000] WARNING: inconsistent lock state
lockdep	[   20.100000] INFO: lockdep is turned off.
KASAN	[   20.100000] BUG: KASAN: slab-out-of-bounds in dlmem_write+0x2c/0x60 [dlmem]
UBSAN	[   20.100000] UBSAN: shift-out-of-bounds in drivers/misc/dlmem.c:77:12
kmemleak	[   20.100000] kmemleak: 2 new suspected memory leaks (see /sys/kernel/debug/kmemleak)
soft lockup	[   20.100000] watchdog: BUG: soft lockup - CPU#1 stuck for 22s! [insmod:321]
hard lockup	[   20.100000] Watchdog detected hard LOCKUP on cpu 1
hung_task	[   20.100000] "echo 0 > /proc/sys/kernel/hung_task_timeout_secs" disables this message.
blocked for more than	[   20.100000] INFO: task insmod:321 blocked for more than 120 seconds.
RCU stall	[   20.100000] rcu: INFO: rcu_sched detected stalls on CPUs/tasks:
RCU stall	[   20.100000] rcu: INFO: rcu_preempt self-detected stall on CPU
RCU stall	[   20.100000] RCU stall detected
Kernel panic	[   20.100000] Kernel panic - not syncing: Fatal exception
EOF
}

echo "TAP version 13"

clean_log >"$tmp/clean.log"

# Every pattern that dmesg-check knows must have a dirty case below.
mapfile -t labels < <("$check" --list | cut -f1)
mapfile -t tested < <(dirty_cases | cut -f1 | sort -u)
ncases=$(dirty_cases | wc -l)
echo "1..$((ncases + 11))"

missing=()
for l in "${labels[@]}"; do
	printf '%s\n' "${tested[@]}" | grep -cxF >/dev/null -- "$l" || missing+=("$l")
done
: >"$tmp/out"
if [ ${#missing[@]} -eq 0 ]; then
	ok "every dmesg-check pattern (${#labels[@]}) has a dirty test case"
else
	printf '%s\n' "${missing[@]}" >"$tmp/out"
	not_ok "patterns without a dirty test case"
fi

rc=0
"$check" "$tmp/clean.log" >"$tmp/out" 2>&1 || rc=$?
if [ "$rc" = 0 ] && grep -q ': clean$' "$tmp/out"; then
	ok "clean boot log (benign look-alike lines) passes"
else
	not_ok "clean boot log (benign look-alike lines) passes (exit $rc)"
fi

rc=0
"$check" - <"$tmp/clean.log" >"$tmp/out" 2>&1 || rc=$?
if [ "$rc" = 0 ]; then ok "clean log on stdin passes"; else not_ok "clean log on stdin passes (exit $rc)"; fi

while IFS=$'\t' read -r label line; do
	# The bad line sits in the middle of a clean log.
	{
		head -n 12 "$tmp/clean.log"
		printf '%s\n' "$line"
		tail -n +13 "$tmp/clean.log"
	} >"$tmp/dirty.log"
	rc=0
	"$check" "$tmp/dirty.log" >"$tmp/out" 2>&1 || rc=$?
	if [ "$rc" = 1 ] &&
		grep -qF -- "FAIL: " "$tmp/out" &&
		grep -F -- "FAIL: " "$tmp/out" | grep -cF >/dev/null -- "$label (" &&
		grep -qF -- ">>    13: $line" "$tmp/out"; then
		ok "flags '$label': ${line#*] }"
	else
		not_ok "flags '$label': ${line#*] } (exit $rc)"
	fi
done < <(dirty_cases)

# Context: the lines around a hit are shown, far-away lines are not.
printf '%s\n' "[ 1.0] WARNING: CPU: 0 PID: 1 at x.c:1 f+0x0/0x1" >"$tmp/ctx.log"
clean_log >>"$tmp/ctx.log"
rc=0
"$check" -C 2 "$tmp/ctx.log" >"$tmp/out" 2>&1 || rc=$?
if [ "$rc" = 1 ] && grep -q '^       3: ' "$tmp/out" && ! grep -q '^       4: ' "$tmp/out"; then
	ok "-C 2 prints two lines of context"
else
	not_ok "-C 2 prints two lines of context (exit $rc)"
fi

rc=0
"$check" -q "$tmp/ctx.log" >"$tmp/out" 2>&1 || rc=$?
if [ "$rc" = 1 ] && [ "$(wc -l <"$tmp/out")" = 1 ]; then
	ok "-q prints only the verdict"
else
	not_ok "-q prints only the verdict (exit $rc)"
fi

rc=0
printf '[ 1.0] Oops: 0000 [#1] SMP\n[ 1.1] Call Trace:\n[ 1.2] Kernel panic - not syncing: Fatal exception\n' |
	"$check" - >"$tmp/out" 2>&1 || rc=$?
if [ "$rc" = 1 ] && grep -q 'FAIL: Oops (1), Call Trace (1), Kernel panic (1)$' "$tmp/out"; then
	ok "several problems are all named in the verdict"
else
	not_ok "several problems are all named in the verdict (exit $rc)"
fi

rc=0
"$check" "$tmp/does-not-exist" >"$tmp/out" 2>&1 || rc=$?
if [ "$rc" = 2 ]; then ok "missing file exits 2"; else not_ok "missing file exits 2 (exit $rc)"; fi

: >"$tmp/empty.log"
rc=0
"$check" "$tmp/empty.log" >"$tmp/out" 2>&1 || rc=$?
if [ "$rc" = 2 ]; then ok "empty log exits 2"; else not_ok "empty log exits 2 (exit $rc)"; fi

rc=0
"$check" >"$tmp/out" 2>&1 || rc=$?
if [ "$rc" = 2 ]; then ok "no argument exits 2"; else not_ok "no argument exits 2 (exit $rc)"; fi

rc=0
"$check" --help >"$tmp/out" 2>&1 || rc=$?
if [ "$rc" = 0 ] && grep -q SYNOPSIS "$tmp/out"; then ok "--help"; else not_ok "--help (exit $rc)"; fi

rc=0
printf '[ 0.0] Command line: hung_task_panic=1 softlockup_panic=1 panic_on_warn=1\n' |
	"$check" - >"$tmp/out" 2>&1 || rc=$?
if [ "$rc" = 0 ]; then
	ok "kernel command line options are not findings"
else
	not_ok "kernel command line options are not findings (exit $rc)"
fi

echo "# $((n - failed)) passed, $failed failed"
echo "$((n - failed)) passed, $failed failed"
[ "$failed" = 0 ]
