#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-dkms.sh [KVER] - dkms add/build/remove of this tree for kernel KVER
# (default: Debian 6.1), in private source and dkms trees so the system's
# /usr/src and /var/lib/dkms are left alone.  TAP output.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
KVER=${1:-6.1.0-56-amd64}
echo "TAP version 13"
echo "1..3"

if ! command -v dkms >/dev/null; then
	for i in 1 2 3; do echo "ok $i - dkms # SKIP dkms not installed (make deps)"; done
	exit 0
fi
if [[ ! -d /usr/src/linux-headers-$KVER && ! -d /lib/modules/$KVER/build ]]; then
	for i in 1 2 3; do echo "ok $i - dkms # SKIP no headers for $KVER (make deps)"; done
	exit 0
fi

name=$(sed -n 's/^PACKAGE_NAME="\(.*\)"/\1/p' "$top/dkms.conf")
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
src=$tmp/src/$name-$ver
mkdir -p "$src" "$tmp/tree"
cp -r "$top/dkms.conf" "$top/Kconfig" "$top/kmod" "$top/uapi" "$src/"
rm -f "$src"/kmod/*.o "$src"/kmod/*.ko "$src"/kmod/.*.cmd

# Debian's dkms uses /lib/modules/KVER/build; give it the headers there.
if [[ ! -e /lib/modules/$KVER/build ]]; then
	echo "# /lib/modules/$KVER/build missing: is linux-headers-$KVER installed?"
fi

fail=0
dk() { dkms "$@" --sourcetree "$tmp/src" --dkmstree "$tmp/tree" \
	-m "$name" -v "$ver" -k "$KVER"; }

if out=$(dk add 2>&1); then echo "ok 1 - dkms add $name/$ver"
else echo "not ok 1 - dkms add"; sed 's/^/# /' <<<"$out"; fail=1; fi

if out=$(dk build 2>&1); then
	ko=$(find "$tmp/tree/$name/$ver/$KVER" -name "$name.ko*" | head -1)
	if [[ -n $ko ]] && modinfo "$ko" | grep -c >/dev/null "^vermagic: *$KVER "; then
		echo "ok 2 - dkms build for $KVER produced $(basename "$ko")"
	else
		echo "not ok 2 - dkms build: no $name.ko with vermagic $KVER"
		fail=1
	fi
else
	echo "not ok 2 - dkms build for $KVER"
	sed 's/^/# /' <<<"$out"
	find "$tmp/tree" -name make.log -exec sed 's/^/# /' {} +
	fail=1
fi

if out=$(dk remove 2>&1); then echo "ok 3 - dkms remove"
else echo "not ok 3 - dkms remove"; sed 's/^/# /' <<<"$out"; fail=1; fi
exit $fail
