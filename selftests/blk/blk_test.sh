#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# blk_test.sh - /dev/dlmbN, the block device over dlmd's memory servers,
# with the real dlmd and two dlm-memservers on 127.0.0.1: creation and
# removal with dlmctl, geometry, zeroes before the first write, data
# written and read back (dd, fio with crc32c verification at several block
# sizes, queue depths and both orders), read-ahead windows, reads racing
# writes of the same blocks (never torn), discard, ext4 (mkfs, copy, fsck,
# compare), swap under a cgroup memory limit with stress-ng verifying its
# memory, garbage in the ioctls, dlmd killed under fio: I/O errors
# within a bounded time, no hang, and the device stays failed under a new
# dlmd; dlmd stopped with a read waiting behind an unanswered write of the
# same block: EIO within a bounded time; and dlmd killed while a program is swapped out to the device: the
# program gets SIGBUS, swapoff and blk-del still work.  Needs root and
# dlmem.ko built with CONFIG_DLMEM_BLK.  TAP output.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=selftests/daemon/lib.sh
. "$here/../daemon/lib.sh"
ko=${DLM_KO:-$top/kmod/dlmem.ko}
ctl=$bin/dlmctl
dev=/dev/dlmb0
mnt=$tmp/mnt
cg=/sys/fs/cgroup/dlm-blk-test
dlmd=

echo "TAP version 13"
if [[ $(id -u) != 0 ]]; then
	echo "1..0 # SKIP needs root (run it with vm-images/vm-run)"
	exit 4
fi
for tool in fio mkfs.ext4 fsck.ext4 blkdiscard blockdev mkswap swapon stress-ng; do
	if ! command -v $tool >/dev/null; then
		echo "1..0 # SKIP $tool missing (make deps)"
		exit 4
	fi
done
need "$bin/dlmd" "$bin/dlm-memserver" "$ctl"
if [[ ! -d /sys/module/dlmem ]] && ! insmod "$ko" 2>"$tmp/insmod.err"; then
	echo "1..0 # SKIP cannot load $ko here: run it with vm-images/vm-run"
	exit 4
fi
if ! "$ctl" info | grep -q '\bblk\b'; then
	echo "1..0 # SKIP dlmem.ko built without CONFIG_DLMEM_BLK"
	exit 4
fi

blk_cleanup() {
	swapoff "$dev" 2>/dev/null
	mountpoint -q "$mnt" && umount "$mnt"
	[[ -d $cg ]] && rmdir "$cg" 2>/dev/null
	for d in /dev/dlmb*; do
		[[ -b $d ]] && "$ctl" blk-del "$d" 2>/dev/null
	done
	cleanup
}
trap blk_cleanup EXIT

start_dlmd() {	# start_dlmd LOG: dlmd on $tmp/memfile; 1 if not registered
	local log=$1 i
	"$bin/dlmd" -f "$tmp/memfile" 2>"$log" &
	dlmd=$!
	pids+=("$dlmd")
	for ((i = 0; i < 100; i++)); do
		grep -q 'msg="registered"' "$log" && return 0
		kill -0 "$dlmd" 2>/dev/null || break
		sleep 0.1
	done
	diag "$log"
	return 1
}

# kill_dlmd_then_wait PID: kill dlmd with SIGKILL, then give PID 60 s to end;
# 0 if it ended (waited: the seconds it took), 1 if it still runs.
kill_dlmd_then_wait() {
	local pid=$1 t0 i
	t0=$(date +%s)
	kill -KILL "$dlmd"
	wait "$dlmd" 2>/dev/null
	for ((i = 0; i < 600; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	waited=$(($(date +%s) - t0))
	! kill -0 "$pid" 2>/dev/null
}

# memcg_enable: cgroup v2 mounted, with the memory controller for children.
memcg_enable() {
	mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup
	grep -qw memory /sys/fs/cgroup/cgroup.subtree_control ||
		echo +memory >/sys/fs/cgroup/cgroup.subtree_control
}

# fio_verify NAME ARGS...: write with crc32c checksums, then verify.
fio_verify() {
	local name=$1
	shift
	timeout 600 fio --name="$name" --filename="$dev" --direct=1 \
		--ioengine=libaio --size=24M --verify=crc32c --do_verify=1 \
		--verify_fatal=1 --verify_state_save=0 --output="$tmp/$name.fio" "$@" \
		>"$tmp/$name.err" 2>&1
}

echo "1..33"

out=$("$ctl" blk-add 16M 2>&1)
rc=$?
if ((rc == 1)) && [[ $out == *"start dlmd"* ]]; then
	ok "blk-add without dlmd: exit 1, says to start dlmd"
else
	notok "blk-add without dlmd: exit $rc ($out)"
fi

start_memserver ms1 64 && start_memserver ms2 64 wait && ms2=$MS_PID &&
	ms2_port=$MS_PORT || { echo "Bail out! memory servers"; exit 1; }
ms1_port=$(sed -n 's/.*addr=127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$tmp/ms1.log")
printf '# blk test\n32\n64 127.0.0.1:%s\n64 127.0.0.1:%s\n' \
	"$ms1_port" "$ms2_port" >"$tmp/memfile"
start_dlmd "$tmp/dlmd.log" || { echo "Bail out! dlmd did not register"; exit 1; }

out=$("$ctl" blk-add 96M -q 16 2>&1)
if [[ $out == "$dev" && -b $dev ]] &&
   (($(blockdev --getsize64 $dev) == 96 << 20)) &&
   (($(blockdev --getss $dev) == 4096)) &&
   [[ $("$ctl" blk-list) == "$dev 96 MiB" ]]; then
	ok "blk-add 96M: $dev, 96 MiB, 4096-byte blocks, listed"
else
	notok "blk-add 96M: $out, $(blockdev --getsize64 $dev 2>&1)"
	diag "$tmp/dlmd.log"
fi

out=$("$ctl" blk-add 1G 2>&1)
rc=$?
if ((rc == 1)) && [[ $out == *"cannot hold"* ]]; then
	ok "blk-add beyond the servers' capacity: ENOSPC, exit 1"
else
	notok "blk-add 1G: exit $rc ($out)"
fi

if cmp -n $((96 << 20)) $dev /dev/zero 2>"$tmp/cmp.err"; then
	ok "a new device reads as zeroes"
else
	notok "a new device reads as zeroes: $(cat "$tmp/cmp.err")"
fi

head -c $((20 << 20)) /dev/urandom >"$tmp/pattern"
if dd if="$tmp/pattern" of=$dev bs=1M oflag=direct status=none &&
   echo 3 >/proc/sys/vm/drop_caches &&
   cmp -n $((20 << 20)) "$tmp/pattern" $dev &&
   dd if=$dev bs=1M skip=20 count=1 iflag=direct status=none |
	cmp -s - <(head -c 1M /dev/zero); then
	ok "20 MB written with dd read back intact, the next MB still zero"
else
	notok "dd write and read back"
fi

blkdiscard -o $((4 << 20)) -l $((8 << 20)) $dev &&
	echo 3 >/proc/sys/vm/drop_caches
if cmp -n $((4 << 20)) "$tmp/pattern" $dev &&
   dd if=$dev bs=1M skip=4 count=8 iflag=direct status=none |
	cmp -s - <(head -c 8M /dev/zero) &&
   cmp -i $((12 << 20)) -n $((8 << 20)) "$tmp/pattern" $dev; then
	ok "blkdiscard of 8 MB: zeroes there, data around it intact"
else
	notok "blkdiscard"
fi

fio_verify seqwrite --rw=write --bs=1M --iodepth=4 &&
	ok "fio sequential 1 MB writes, depth 4, crc32c verified" ||
	{ notok "fio sequential 1M"; diag "$tmp/seqwrite.err"; }
fio_verify randwrite4k --rw=randwrite --bs=4k --iodepth=16 --offset=24M &&
	ok "fio random 4 KB writes, depth 16, crc32c verified" ||
	{ notok "fio random 4k"; diag "$tmp/randwrite4k.err"; }
fio_verify randmix --rw=randwrite --bsrange=4k-1m --iodepth=32 \
	--offset=48M --numjobs=2 --offset_increment=24M &&
	ok "fio random 4 KB-1 MB writes, 2 jobs at depth 32, crc32c verified" ||
	{ notok "fio random 4k-1m"; diag "$tmp/randmix.err"; }

blkdiscard -z -o 0 -l $((1 << 20)) $dev 2>"$tmp/wz.err" &&
	echo 3 >/proc/sys/vm/drop_caches
if dd if=$dev bs=1M count=1 iflag=direct status=none |
	cmp -s - <(head -c 1M /dev/zero); then
	ok "write-zeroes of 1 MB reads back as zeroes"
else
	notok "write-zeroes: $(cat "$tmp/wz.err")"
fi

# Read-ahead windows (kmod/blk_ra.c): data, coherence with writes, races.
if [[ $(cat /sys/block/dlmb0/dlmb/readahead_kb 2>&1) == 128 ]]; then
	ok "read-ahead: 128 KB windows by default (/sys/block/dlmb0/dlmb)"
else
	notok "read-ahead: readahead_kb $(cat /sys/block/dlmb0/dlmb/readahead_kb 2>&1)"
fi
for check in seq write race; do
	if out=$(timeout 300 python3 "$here/blk_ra.py" $dev $check 2>&1); then
		ok "read-ahead $check: $out"
	else
		notok "read-ahead $check: $out"
	fi
done
# Overlapping requests (kmod/blk_order.c): a read never returns a torn block.
if out=$(timeout 300 python3 "$here/blk_ra.py" $dev overlap 2>&1); then
	ok "read during a write of the same blocks: $out"
else
	notok "read during a write of the same blocks: $out"
fi
fio_verify ra32k --rw=write --bs=32k --iodepth=8 --offset=72M &&
	ok "fio sequential 32 KB writes read back at depth 8 through read-ahead, crc32c verified" ||
	{ notok "fio sequential 32k"; diag "$tmp/ra32k.err"; }

mkdir -p "$mnt"
if mkfs.ext4 -q -F $dev >"$tmp/mkfs.log" 2>&1 && mount $dev "$mnt"; then
	ok "mkfs.ext4 and mount"
else
	notok "mkfs.ext4 and mount"
	diag "$tmp/mkfs.log"
fi
mkdir -p "$tmp/tree"
cp -a "$top/kmod" "$top/daemon" "$top/Documentation" "$tmp/tree/"
cp "$tmp/pattern" "$tmp/tree/"
if cp -a "$tmp/tree" "$mnt/" && umount "$mnt" &&
   echo 3 >/proc/sys/vm/drop_caches && mount $dev "$mnt" &&
   diff -r "$tmp/tree" "$mnt/tree" >"$tmp/diff.out"; then
	ok "a file tree copied in, remounted and compared equal"
else
	notok "file tree round trip"
	head -5 "$tmp/diff.out" | diag /dev/stdin
fi

out=$("$ctl" blk-del 0 2>&1)
rc=$?
if ((rc == 1)) && [[ $out == *"in use"* ]] && [[ -b $dev ]]; then
	ok "blk-del while mounted: refused (EBUSY), device intact"
else
	notok "blk-del while mounted: exit $rc ($out)"
fi

umount "$mnt"
if fsck.ext4 -fn $dev >"$tmp/fsck.log" 2>&1; then
	ok "fsck.ext4 -fn finds the file system clean"
else
	notok "fsck.ext4"
	diag "$tmp/fsck.log"
fi

# Swap: stress-ng's memory checked under a cgroup limit that forces paging.
swap_before=$(awk '/^SwapTotal/ {print $2}' /proc/meminfo)
if mkswap $dev >/dev/null 2>&1 && swapon -p 10 $dev; then
	memcg_enable
	mkdir -p "$cg" && echo 24M >"$cg/memory.max"
	pswp0=$(awk '/^pswpout/ {print $2}' /proc/vmstat)
	sh -c "echo \$\$ >$cg/cgroup.procs; exec timeout 300 stress-ng \
		--vm 1 --vm-bytes 48M --vm-method inc-nybble --vm-keep \
		--verify --timeout 20s --metrics-brief" >"$tmp/stress.log" 2>&1
	rc=$?
	peak=$(($(awk '/^pswpout/ {print $2}' /proc/vmstat) - pswp0))
	if ((rc == 0)) && ! grep -qi "fail\|error" "$tmp/stress.log" &&
	   ((peak > 0)); then
		ok "swap on $dev: stress-ng --vm 48 MB in a 24 MB cgroup verified (pswpout $peak)"
	else
		notok "swap on $dev: stress-ng exit $rc, pswpout $peak"
		diag "$tmp/stress.log"
	fi
	swapoff $dev
	rmdir "$cg" 2>/dev/null
else
	notok "mkswap and swapon $dev (SwapTotal was $swap_before kB)"
fi

if python3 "$here/blk_garbage.py" >"$tmp/garbage.out" 2>&1; then
	ok "DLM_IOC_BLK_ADD and _DEL refuse garbage ($(tail -1 "$tmp/garbage.out"))"
else
	notok "ioctl garbage"
	diag "$tmp/garbage.out"
fi

if "$ctl" blk-del 0 && [[ ! -e $dev ]] && [[ -z $("$ctl" blk-list) ]]; then
	ok "blk-del 0: the device is gone"
else
	notok "blk-del 0"
fi

# blk_readahead_kb=0: a device created then reads without windows.
param=/sys/module/dlmem/parameters/blk_readahead_kb
echo 0 >$param
if "$ctl" blk-add 16M >/dev/null &&
   [[ $(cat /sys/block/dlmb0/dlmb/readahead_kb) == 0 ]] &&
   dd if="$tmp/pattern" of=$dev bs=1M count=16 oflag=direct status=none &&
   dd if=$dev bs=32k iflag=direct status=none | cmp -s - <(head -c 16M "$tmp/pattern") &&
   [[ $(cat /sys/block/dlmb0/dlmb/ra_stat) == "0 0 0 0 0" ]]; then
	ok "blk_readahead_kb=0: no windows, 16 MB read back in 32 KB reads intact"
else
	notok "blk_readahead_kb=0: readahead_kb $(cat /sys/block/dlmb0/dlmb/readahead_kb 2>&1), ra_stat $(cat /sys/block/dlmb0/dlmb/ra_stat 2>&1)"
fi
echo 128 >$param
"$ctl" blk-del 0

# dlmd killed under fio: errors, not a hang, well within fio's own timeout.
"$ctl" blk-add 32M -q 8 >/dev/null
dd if=/dev/urandom of=$dev bs=1M count=8 oflag=direct status=none
fio --name=death --filename=$dev --direct=1 --ioengine=libaio --rw=randrw \
	--bs=64k --iodepth=8 --time_based --runtime=120 --size=32M \
	--output="$tmp/death.fio" >"$tmp/death.err" 2>&1 &
fio=$!
sleep 3
if ! kill_dlmd_then_wait "$fio"; then
	notok "dlmd killed under fio: fio still running after 60 s"
	kill -KILL "$fio"
else
	ok "dlmd killed under fio: fio stopped with errors after $waited s"
fi
wait "$fio" 2>/dev/null

if dd if=$dev of=/dev/null bs=4k count=1 iflag=direct status=none 2>/dev/null; then
	notok "a read after dlmd died succeeded"
else
	ok "a read after dlmd died fails (EIO)"
fi
start_dlmd "$tmp/dlmd2.log" || notok "a new dlmd registers"
if dd if=$dev of=/dev/null bs=4k count=1 iflag=direct status=none 2>/dev/null; then
	notok "a new dlmd: the old device still reads"
else
	ok "a new dlmd does not revive the old device's data: EIO"
fi
if "$ctl" blk-del 0 && [[ ! -e $dev ]]; then
	ok "the failed device is removed"
else
	notok "the failed device is removed"
fi

# dlmd stopped (registered, alive, silent) with a write in flight and a
# read of the same block waiting behind it in the overlap order
# (kmod/blk_order.c).  blk-mq's timeout work cannot run while a
# ->queue_rq() sleeps there, so the waiting read must look at the
# requests' age itself: both end in EIO within about request_timeout_ms.
# stalled_overlap: 0 if so; prints what it saw.
stalled_overlap() {
	local w r start ms wrc rrc
	"$ctl" blk-add 16M -q 4 >/dev/null || return 1
	dd if="$tmp/pattern" of=$dev bs=1M count=1 oflag=direct status=none || return 1
	echo 1000 >$params/request_timeout_ms
	kill -STOP "$dlmd"
	dd if="$tmp/pattern" of=$dev bs=4k count=1 seek=1 oflag=direct \
		status=none 2>"$tmp/stall-w.err" & w=$!
	sleep 0.3	# the write is with the (stopped) daemon
	start=$(date +%s%N)
	dd if=$dev of=/dev/null bs=4k count=1 skip=1 iflag=direct \
		status=none 2>"$tmp/stall-r.err" & r=$!
	for _ in $(seq 300); do
		kill -0 $w 2>/dev/null || kill -0 $r 2>/dev/null || break
		sleep 0.1
	done
	ms=$((($(date +%s%N) - start) / 1000000))
	if kill -0 $w 2>/dev/null || kill -0 $r 2>/dev/null; then
		echo "still waiting after $ms ms"
		return 1
	fi
	wait $w; wrc=$?
	wait $r; rrc=$?
	echo "write exit $wrc, read exit $rrc, $ms ms"
	((wrc != 0 && rrc != 0 && ms < 10000)) &&
		dmesg | tail -20 | grep -q "found by a block request waiting for an overlap"
}
params=/sys/module/dlmem/parameters
old_timeout=$(cat $params/request_timeout_ms)
if out=$(stalled_overlap); then
	ok "dlmd stopped, a read waiting behind an unanswered write: both EIO, bounded ($out)"
else
	notok "dlmd stopped, a read waiting behind an unanswered write: $out"
	diag "$tmp/stall-r.err"
fi
echo "$old_timeout" >$params/request_timeout_ms
kill -KILL "$dlmd" 2>/dev/null
kill -CONT "$dlmd" 2>/dev/null
wait "$dlmd" 2>/dev/null
"$ctl" blk-del 0 2>/dev/null
start_dlmd "$tmp/dlmd3.log" || notok "a new dlmd registers after the stall"
# dlmd killed while a program's memory is swapped out to /dev/dlmbN.  The
# cgroup has memory.high, not memory.max: reclaim (the same swap-out path
# kswapd takes) runs in the program's context, and failed swap writes
# cannot end in an OOM kill.  The program must die of SIGBUS at its next
# swap-in, within a bounded time; then swapoff and blk-del must work.
# glibc's rseq registration is turned off for the program: the kernel
# writes a thread's rseq area (in its TLS, anonymous memory that may be
# swapped out) on the program's behalf, and when that page is the first
# lost one the kernel kills it with SIGSEGV, not SIGBUS (kernel/rseq.c;
# seen once in CI, with no "segfault at" line since no access of the
# program's own faulted).
stream=$build/bench/stream
if [[ ! -x $stream ]]; then
	skip "dlmd killed under swap: $stream not built"
	skip "swapoff after dlmd died under swap"
	skip "blk-del after dlmd died under swap"
elif swapdev=$("$ctl" blk-add 64M) && mkswap "$swapdev" >/dev/null &&
     swapon -p 10 "$swapdev"; then
	memcg_enable
	mkdir -p "$cg" && echo 16M >"$cg/memory.high"
	pswp0=$(awk '/^pswpout/ {print $2}' /proc/vmstat)
	GLIBC_TUNABLES=glibc.pthread.rseq=0 \
	sh -c "echo \$\$ >$cg/cgroup.procs; exec $stream -m malloc -s 12 -i 1000000 -q" \
		>"$tmp/swapdeath.log" 2>&1 &
	prog=$!
	for ((i = 0; i < 600; i++)); do	# until 8 MB went to the device
		(($(awk '/^pswpout/ {print $2}' /proc/vmstat) - pswp0 > 2048)) && break
		kill -0 "$prog" 2>/dev/null || break
		sleep 0.1
	done
	swapped=$((($(awk '/^pswpout/ {print $2}' /proc/vmstat) - pswp0) / 256))
	if ! kill_dlmd_then_wait "$prog"; then
		notok "dlmd killed under swap ($swapped MB out): the program still runs after 60 s"
		kill -KILL "$prog"
		wait "$prog" 2>/dev/null
	else
		wait "$prog" 2>/dev/null	# no "Bus error" job report
		rc=$?
		if ((rc == 128 + 7 && swapped >= 8)); then
			ok "dlmd killed under swap ($swapped MB out): the program got SIGBUS after $waited s"
		else
			notok "dlmd killed under swap ($swapped MB out): program exit $rc, want SIGBUS (135)"
			diag "$tmp/swapdeath.log"
		fi
	fi
	if timeout 120 swapoff "$swapdev"; then
		ok "swapoff after dlmd died under swap"
	else
		notok "swapoff after dlmd died under swap: exit $?"
	fi
	rmdir "$cg" 2>/dev/null
	if "$ctl" blk-del "$swapdev" && [[ ! -e $swapdev ]]; then
		ok "blk-del after dlmd died under swap"
	else
		notok "blk-del after dlmd died under swap"
	fi
else
	notok "dlmd killed under swap: blk-add 64M, mkswap and swapon"
	skip "swapoff after dlmd died under swap"
	skip "blk-del after dlmd died under swap"
fi

if dmesg | grep >/dev/null -E "hung_task|blocked for more than"; then
	notok "no hung task reported"
else
	ok "no hung task reported"
fi
kill -TERM "$ms2"
wait "$ms2" 2>/dev/null
exit "$fail"
