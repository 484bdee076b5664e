#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-intree.sh - the module built in-tree, as a kernel developer merging
# it would: Debian's linux-source-6.1 with kmod/ as drivers/dlmem/, the
# uapi headers in include/uapi/linux/, Kconfig sourced from drivers/Kconfig
# and Debian's 6.1 config.  Checks that the Kconfig symbols reach the .config
# (CONFIG_DLMEM=m with CONFIG_DLMEM_BLK=y, then =n), that dlmem.ko builds
# warning-free (-Werror) both ways, with blk.o only when CONFIG_DLMEM_BLK is
# set, and that the subsystems not written yet cannot be chosen.  TAP; the
# tree is kept in build/linux-intree (about 1.5 GB) and reused.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
TAR=${LINUX_SRC_TAR:-/usr/src/linux-source-6.1.tar.xz}
KVER=${1:-6.1.0-56-amd64}
HDRS=/usr/src/linux-headers-$KVER
tree=${INTREE_DIR:-$top/build/linux-intree}
jobs=$(nproc)
n=0 fail=0

ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); echo "not ok $n - $*"; fail=1; }
diag() { sed 's/^/# /' "$1" | tail -"${2:-30}"; }

echo "TAP version 13"
for f in "$TAR" "$HDRS/.config" "$HDRS/Module.symvers"; do
	if [[ ! -f $f ]]; then
		echo "1..0 # SKIP $f missing (make deps)"
		exit 4
	fi
done
echo "1..5"
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

if [[ ! -f $tree/.extracted ]]; then
	rm -rf "$tree" && mkdir -p "$tree" &&
		tar -C "$tree" -xf "$TAR" --strip-components=1 &&
		touch "$tree/.extracted" || { echo "Bail out! cannot extract $TAR"; exit 1; }
fi
cd "$tree" || exit 1

# The merge: sources, uapi headers, Kconfig and Makefile hooks.
rm -rf drivers/dlmem && mkdir drivers/dlmem &&
	cp "$top"/kmod/*.[ch] "$top"/kmod/Kbuild drivers/dlmem/ &&
	rm -f drivers/dlmem/*.mod.c &&
	cp "$top/Kconfig" drivers/dlmem/Kconfig &&
	cp "$top"/uapi/linux/*.h include/uapi/linux/ || exit 1
grep -q 'drivers/dlmem/Kconfig' drivers/Kconfig ||
	sed -i '$s|^endmenu$|source "drivers/dlmem/Kconfig"\n\nendmenu|' drivers/Kconfig
grep -q 'dlmem/' drivers/Makefile ||
	echo 'obj-$(CONFIG_DLMEM)		+= dlmem/' >>drivers/Makefile

# configure enable|disable: Debian's config with CONFIG_DLMEM=m and the
# DLMEM_BLK, DLMEM_FMPL and DLMEM_AWGSTAR subsystems all set or all unset.
configure() {
	cp "$HDRS/.config" .config &&
		scripts/config --disable MODULE_SIG --disable DEBUG_INFO_BTF \
			--set-str SYSTEM_TRUSTED_KEYS "" \
			--set-str SYSTEM_REVOCATION_KEYS "" \
			--module DLMEM "--$1" DLMEM_BLK "--$1" DLMEM_FMPL \
			"--$1" DLMEM_AWGSTAR &&
		make -s olddefconfig >"$log/config" 2>&1
}

configured=0
if configure enable && grep -q '^CONFIG_DLMEM=m' .config &&
   grep -q '^CONFIG_DLMEM_BLK=y' .config; then
	ok "Kconfig: CONFIG_DLMEM=m and CONFIG_DLMEM_BLK=y in Debian's config"
	configured=1
else
	notok "Kconfig: CONFIG_DLMEM=m and CONFIG_DLMEM_BLK=y"
	diag "$log/config"
fi
if ((configured)) && grep -q '^CONFIG_DLMEM_FMPL=y' .config &&
   grep -q '^CONFIG_DLMEM_AWGSTAR=y' .config; then
	ok "Kconfig: CONFIG_DLMEM_FMPL=y and CONFIG_DLMEM_AWGSTAR=y can be chosen"
else
	notok "Kconfig: CONFIG_DLMEM_FMPL or CONFIG_DLMEM_AWGSTAR not set"
fi

# build NAME: modules_prepare once, then drivers/dlmem/dlmem.ko with -Werror
# and no compiler warning.  vmlinux itself is not built (an hour on two
# cores), so modpost's "vmlinux.o is missing" and "undefined!" warnings are
# expected and ignored; everything the compiler says is not.
build() {
	cp "$HDRS/Module.symvers" . &&
		make -s -j"$jobs" modules_prepare >"$log/$1" 2>&1 &&
		rm -f drivers/dlmem/*.o drivers/dlmem/dlmem.ko &&
		make -j"$jobs" KCFLAGS=-Werror W=1 drivers/dlmem/dlmem.ko \
			>>"$log/$1" 2>&1 &&
		! grep -E -q '\.[ch]:[0-9]+(:[0-9]+)?: (warning|error):' "$log/$1" &&
		[[ -f drivers/dlmem/dlmem.ko ]]
}

if build blk-y && [[ -f drivers/dlmem/blk.o && -f drivers/dlmem/fmpl_dev.o &&
		     -f drivers/dlmem/awg_dev.o ]] &&
   modinfo drivers/dlmem/dlmem.ko | grep -q '^vermagic: *6\.1\.'; then
	ok "in-tree build with CONFIG_DLMEM_BLK=y FMPL=y AWGSTAR=y: dlmem.ko with blk.o, fmpl_*.o and awg_*.o, no warning"
else
	notok "in-tree build with CONFIG_DLMEM_BLK=y FMPL=y AWGSTAR=y"
	diag "$log/blk-y"
fi
if configure disable && grep -q '^# CONFIG_DLMEM_BLK is not set' .config &&
   grep -q '^# CONFIG_DLMEM_FMPL is not set' .config &&
   grep -q '^# CONFIG_DLMEM_AWGSTAR is not set' .config &&
   build blk-n && [[ ! -f drivers/dlmem/blk.o && ! -f drivers/dlmem/fmpl_dev.o &&
		     ! -f drivers/dlmem/awg_dev.o ]]; then
	ok "in-tree build with CONFIG_DLMEM_BLK=n FMPL=n AWGSTAR=n: dlmem.ko without blk.o, fmpl_*.o and awg_*.o, no warning"
else
	notok "in-tree build with CONFIG_DLMEM_BLK=n FMPL=n AWGSTAR=n"
	diag "$log/config"
	diag "$log/blk-n"
fi
if [[ ! -f drivers/dlmem/dlmem.ko ]] ||
   nm drivers/dlmem/dlmem.ko | grep >/dev/null 'dlm_blk_queue_rq\|fmpl_ioctl\|awg_ioctl'; then
	notok "CONFIG_DLMEM_BLK=n FMPL=n AWGSTAR=n: the module still has blk.c's, fmpl_dev.c's or awg_dev.c's code"
else
	ok "CONFIG_DLMEM_BLK=n FMPL=n AWGSTAR=n: no blk.c (dlm_blk_queue_rq), fmpl_dev.c (fmpl_ioctl) or awg_dev.c (awg_ioctl) code in the module"
fi
exit "$fail"
