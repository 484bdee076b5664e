#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# trinity_test.sh - trinity (the kernel's system call fuzzer) against this
# module's interfaces, for a bounded time, in the VM only:
#   1. /dev/dlm, /dev/fmpl, /dev/awgstar and a /dev/dlmb0 served by dlmd
#      and a memory server, as trinity's victim files (open with random flags, then
#      ioctl, mmap, mremap, madvise, mprotect, read, write, ... on them);
#   2. netlink sockets (the generic netlink family "dlm" among them).
# trinity runs as user nobody: it must not be able to touch the host's
# files that the VM shares, and an unprivileged user is whom /dev/dlm must
# withstand.  After each run the devices must still work; vm-run fails the
# run on any WARN, BUG, oops or lockdep report in dmesg.
# TRINITY_SECONDS (default 45) bounds each run.  TAP output.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export O=${DLM_BIN:-$here/../../build}
# shellcheck source=selftests/daemon/lib.sh
source "$here/../daemon/lib.sh"
secs=${TRINITY_SECONDS:-45}

echo "TAP version 13"
if [[ -z ${DLM_VM:-} ]]; then
	echo "1..0 # SKIP runs only inside the VM (vm-images/vm-run): a fuzzer is not let loose on the host"
	exit 4
fi
if [[ $(id -u) != 0 || ! -c /dev/dlm ]]; then
	echo "1..0 # SKIP needs root and dlmem.ko loaded"
	exit 4
fi
if ! command -v trinity >/dev/null || ! id nobody >/dev/null 2>&1; then
	echo "1..0 # SKIP needs trinity (make deps) and the user nobody"
	exit 4
fi
need "$bin/dlmd" "$bin/dlm-memserver" "$bin/dlmctl" "$bin/dlm-demo"
echo "1..7"

start_memserver ms 256 wait && port=$MS_PORT ||
	{ echo "Bail out! dlm-memserver did not start"; exit 1; }
printf '64\n256 127.0.0.1:%s\n' "$port" >"$tmp/memfile"
blk=
if start_dlmd dlmd "$tmp/memfile" &&
   blk=$("$bin/dlmctl" blk-add 32M 2>"$tmp/blk.err") && [[ -b $blk ]]; then
	ok "dlmd registered, $blk on a memory server"
else
	notok "dlmd and a block device for trinity"
	diag "$tmp/blk.err"
fi

# The victims: nodes of the devices in a directory nobody may open them in.
vict=$tmp/victims
mkdir -p "$vict"
for dev in /dev/dlm /dev/fmpl /dev/awgstar ${blk:+"$blk"}; do
	[[ -e $dev ]] || continue
	mknod "$vict/${dev##*/}" "$(stat -c %F "$dev" | sed 's/character.*/c/;s/block.*/b/')" \
		"$((16#$(stat -c %t "$dev")))" "$((16#$(stat -c %T "$dev")))"
done
chmod 0666 "$vict"/*
chmod 0755 "$tmp" "$vict"
taint0=$(cat /proc/sys/kernel/tainted)

# trin NAME ARGS...: trinity as nobody for $secs s in a scratch directory.
trin() {
	local name=$1 rc
	shift
	mkdir -p "$tmp/$name"
	chown nobody "$tmp/$name"
	(cd "$tmp/$name" && timeout -s INT -k 30 "$secs" \
		runuser -u nobody -- trinity -q -l off -C 2 "$@") \
		>"$tmp/$name.log" 2>&1
	rc=$?
	# 124: stopped by the time bound, the normal end.
	[[ $rc == 0 || $rc == 124 ]]
}

if trin dev -V "$vict" \
	--disable-fds=sockets,pipes,perf,epoll,eventfd,pseudo,timerfd,memfd,drm \
	-c ioctl -c mmap -c munmap -c mremap -c madvise -c mprotect -c msync \
	-c mlock -c munlock -c read -c write -c pread64 -c pwrite64 \
	-c readv -c writev -c lseek -c fsync -c close -c dup -c fcntl -c poll; then
	ok "trinity ${secs} s on /dev/dlm, /dev/fmpl, /dev/awgstar, $blk (as nobody)"
else
	notok "trinity on the devices did not run"
fi
sed -n '/^ *\(ioctl\|mmap\|read\|write\):/p' "$tmp/dev.log" | head -8 | sed 's/^/# /'
tail -3 "$tmp/dev.log" | sed 's/^/# /'

# Sockets only: trinity 2023.01 (Debian 12) sometimes dies of its own
# "stack smashing detected" while opening the files it found in /sys and
# /proc at start-up (fixed upstream in trinity's pull request 55).
if trin nl -P PF_NETLINK --disable-fds=pipes,perf,epoll,eventfd,pseudo,timerfd,testfile,memfd,drm \
	-c socket -c sendmsg -c sendto -c recvmsg \
	-c recvfrom -c setsockopt -c getsockopt -c bind -c close; then
	ok "trinity ${secs} s on netlink sockets (as nobody)"
else
	notok "trinity on netlink sockets did not run"
fi
tail -3 "$tmp/nl.log" | sed 's/^/# /'

# Afterwards everything still works and nothing new tainted the kernel.
if timeout 120 "$bin/dlm-demo" --size 16 --budget 8 >"$tmp/demo.out" 2>&1; then
	ok "/dev/dlm still works (dlm-demo)"
else
	notok "/dev/dlm after trinity"
	diag "$tmp/demo.out"
fi
awgp=$O/selftests/awgstar/awg_ring_prog
if [[ ! -c /dev/awgstar ]]; then
	ok "# SKIP no /dev/awgstar"
elif "$awgp" mix /dev/awgstar 31 200 0 65536 $((4 << 20)) &&
     "$awgp" check /dev/awgstar 31 $((4 << 20)); then
	ok "/dev/awgstar still works (writes, stores, flush, data checked)"
else
	notok "/dev/awgstar after trinity"
fi
if [[ -b $blk ]] && dd if=/dev/urandom of="$tmp/pat" bs=1M count=4 2>/dev/null &&
   dd if="$tmp/pat" of="$blk" bs=1M oflag=direct 2>/dev/null &&
   cmp <(dd if="$blk" bs=1M count=4 iflag=direct 2>/dev/null) "$tmp/pat"; then
	ok "$blk still reads back what is written"
else
	notok "$blk after trinity"
fi
taint1=$(cat /proc/sys/kernel/tainted)
if [[ $taint1 == "$taint0" ]]; then
	ok "kernel taint unchanged ($taint0)"
else
	notok "kernel taint changed: $taint0 -> $taint1"
fi
"$bin/dlmctl" blk-del "${blk#/dev/dlmb}" >/dev/null 2>&1
exit $fail
