#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# debug-kernel.sh - build (and cache) the debug kernel of `make check-debug`
# from Debian's linux-source-6.1.  See --help.
set -euo pipefail

prog=debug-kernel.sh
here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd -P)
repo=$(cd "$here/.." && pwd -P)

tarball=${LINUX_SRC_TAR:-/usr/src/linux-source-6.1.tar.xz}
fragment=${DLM_DEBUG_CONFIG:-$here/debug.config}
dir=${DLM_DEBUG_KERNEL_DIR:-$repo/build/debug-kernel}
jobs=${DLM_DEBUG_JOBS:-$(nproc)}
force=0
print=

usage() {
	cat <<EOF
NAME
    debug-kernel.sh - build and cache the debug kernel for make check-debug

SYNOPSIS
    vm-images/debug-kernel.sh [--force] [-j N] [--print WHAT]
    vm-images/debug-kernel.sh --help

DESCRIPTION
    Builds a Linux 6.1 kernel from Debian's linux-source-6.1 tarball
    ($tarball) with KASAN (generic, inline), kmemleak, lockdep
    (PROVE_LOCKING), DEBUG_ATOMIC_SLEEP and DEBUG_PAGEALLOC on top of a
    minimal virtme-ng config, for booting with vm-images/vm-run.

    1. the tarball is extracted to $dir/linux-source-6.1
       (KDIR for building dlmem.ko against this kernel), and the fixes in
       vm-images/debug-patches/ are applied: upstream bugs of 6.1 that
       the selftests hit outside dlmem (today two, both in rdma_rxe under
       the verbs tests: a use-after-free and an out-of-bounds read that
       KASAN reports);
    2. the config is 'vng --kconfig' (virtme-ng's minimal config: defconfig
       plus what vng needs), or, without vng, 'make defconfig' +
       kvm_guest.config, with the fragment
       $fragment
       merged in by scripts/kconfig/merge_config.sh and 'make olddefconfig';
       every symbol the fragment sets is checked to have its value;
    3. bzImage and the modules are built with 'nice -n 19 make -jN';
    4. 'make modules_install' installs /lib/modules/RELEASE (vm-run needs
       it; RELEASE is 6.1.x-dlmdebug), bzImage is copied to
       $dir/bzImage.

    The result is cached: the key is a hash of the fragment, the patches,
    the source package's version, vng's version and a recipe number in
    this script.  When the key, bzImage
    and /lib/modules/RELEASE are all there, the script only prints where
    they are (instant).  A changed key rebuilds incrementally in the same
    tree (a new source version is extracted afresh).

    Building takes long: about 40-60 minutes on 2 shared cores (nice 19).

OPTIONS
    --force       rebuild even when the cache is valid
    -j N          parallel make jobs (default: nproc = $jobs, or \$DLM_DEBUG_JOBS)
    --print WHAT  after making sure the kernel is built, print only WHAT:
                  kdir, bzimage, release or key
    -h, --help    show this text

ENVIRONMENT
    LINUX_SRC_TAR          the source tarball (default $tarball)
    DLM_DEBUG_CONFIG       the fragment (default vm-images/debug.config)
    DLM_DEBUG_KERNEL_DIR   the cache directory (default build/debug-kernel)
    DLM_DEBUG_JOBS         make -j

FILES
    $dir/linux-source-6.1/   source and build tree (KDIR)
    $dir/bzImage             the kernel image for vm-run --kernel
    $dir/release             its release (uname -r)
    $dir/key                 the cache key of the last good build
    $dir/build.log           the last build's output
    /lib/modules/RELEASE/    its modules

EXIT STATUS
    0 the kernel is there, 1 the build failed, 2 bad usage.
EOF
}

msg() { echo "$prog: $*" >&2; }
die() {
	msg "error: $*"
	exit 1
}

while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) usage; exit 0 ;;
	--force) force=1 ;;
	-j) [ $# -ge 2 ] || { msg "-j needs a number"; exit 2; }; jobs=$2; shift ;;
	-j*) jobs=${1#-j} ;;
	--print) [ $# -ge 2 ] || { msg "--print needs kdir|bzimage|release|key"; exit 2; }
		print=$2; shift ;;
	*) msg "unknown argument '$1' (see --help)"; exit 2 ;;
	esac
	shift
done
case $print in '' | kdir | bzimage | release | key) ;;
*) msg "--print $print: want kdir, bzimage, release or key"; exit 2 ;;
esac
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { msg "-j '$jobs': want a positive number"; exit 2; }

[ -f "$tarball" ] || die "$tarball missing: apt-get install linux-source-6.1"
[ -f "$fragment" ] || die "config fragment $fragment missing"

srcname=$(basename "$tarball" .tar.xz)
src=$dir/$srcname
vng=$(command -v vng || true)
if [ -z "$vng" ] && [ -x "${HOME:-/root}/.pyenv/shims/vng" ]; then
	vng=${HOME:-/root}/.pyenv/shims/vng
fi

src_version() {
	local v
	v=$(dpkg-query -W -f '${Version}' "$srcname" 2>/dev/null || true)
	[ -n "$v" ] || v=$(stat -c '%s-%Y' "$tarball")
	echo "$srcname $v"
}
srcver=$(src_version)
vngver=$([ -n "$vng" ] && "$vng" --version 2>/dev/null || echo none)
# Bump recipe when a change to this script should rebuild the kernel.
recipe=1
patches=$(cd "$(dirname "$0")" && pwd)/debug-patches
key=$({ echo "recipe $recipe"; echo "$srcver"; echo "$vngver"; cat "$fragment"
	cat "$patches"/*.patch 2>/dev/null; } | sha256sum | cut -c1-16)

report() {
	case $print in
	kdir) echo "$src" ;;
	bzimage) echo "$dir/bzImage" ;;
	release) cat "$dir/release" ;;
	key) echo "$key" ;;
	'') msg "debug kernel $(cat "$dir/release") (key $key): $dir/bzImage, KDIR $src" ;;
	esac
}

mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9 # one build at a time; a second caller waits and then finds the cache

cached() {
	[ "$force" = 0 ] && [ -f "$dir/key" ] && [ "$(cat "$dir/key")" = "$key" ] &&
		[ -f "$dir/bzImage" ] && [ -f "$dir/release" ] &&
		[ -d "/lib/modules/$(cat "$dir/release")/kernel" ]
}
if cached; then
	report
	exit 0
fi

start=$(date +%s)
log=$dir/build.log
: >"$log"
msg "building the debug kernel (key $key); log in $log"

# --- source -----------------------------------------------------------------
if [ ! -f "$src/Makefile" ] || [ "$(cat "$dir/srcver" 2>/dev/null)" != "$srcver" ]; then
	msg "extracting $tarball"
	rm -rf "$src" "$dir/srcver"
	nice -n 19 tar -C "$dir" -xf "$tarball"
	[ -f "$src/Makefile" ] || die "$tarball did not give $src"
	echo "$srcver" >"$dir/srcver"
fi
cd "$src"

# --- fixes for upstream bugs the selftests hit (debug-patches/*.patch) -------
for p in "$patches"/*.patch; do
	[ -f "$p" ] || continue
	command -v patch >/dev/null || die "patch missing: apt-get install patch"
	if patch -p1 -R -s -f --dry-run <"$p" >/dev/null 2>&1; then
		continue	# applied in an earlier build of this tree
	fi
	patch -p1 -s -f <"$p" >>"$log" 2>&1 || die "$(basename "$p") does not apply (see $log)"
	msg "applied $(basename "$p")"
done

# --- config -----------------------------------------------------------------
rm -f .config
if [ -n "$vng" ] && "$vng" --kconfig >>"$log" 2>&1 && [ -f .config ]; then
	msg "base config: vng --kconfig (virtme-ng's minimal config)"
else
	msg "base config: make defconfig + kvm_guest.config (vng --kconfig failed or no vng)"
	nice -n 19 make defconfig >>"$log" 2>&1
	nice -n 19 make kvm_guest.config >>"$log" 2>&1
fi
scripts/kconfig/merge_config.sh -m .config "$fragment" >>"$log" 2>&1 ||
	die "merge_config.sh failed (see $log)"
nice -n 19 make olddefconfig >>"$log" 2>&1 || die "make olddefconfig failed (see $log)"

# Every symbol of the fragment must have the value asked for.
bad=0
while IFS= read -r line; do
	case $line in
	CONFIG_*=*) sym=${line%%=*} want=$line ;;
	"# CONFIG_"*" is not set") sym=${line#\# }; sym=${sym%% *}; want= ;;
	*) continue ;;
	esac
	have=$(grep -E "^($sym=|# $sym is not set)" .config || true)
	if [ -z "$want" ]; then
		[[ -z $have || $have == "# $sym is not set" ]] && continue
	else
		[ "$have" = "$want" ] && continue
	fi
	msg "config: wanted '${want:-# $sym is not set}', got '${have:-nothing}'"
	bad=1
done <"$fragment"
[ "$bad" = 0 ] || die "the config does not have what $fragment asks for (missing dependencies?)"
cp .config "$dir/config"

# --- build --------------------------------------------------------------------
msg "make -j$jobs bzImage modules (nice 19; this takes long)"
if ! nice -n 19 make -j"$jobs" bzImage modules >>"$log" 2>&1; then
	tail -n 30 "$log" >&2
	die "kernel build failed (see $log)"
fi
release=$(make -s kernelrelease)
[ -n "$release" ] || die "no kernelrelease"
msg "make modules_install (/lib/modules/$release)"
rm -rf "/lib/modules/$release/kernel"
nice -n 19 make INSTALL_MOD_STRIP=1 modules_install >>"$log" 2>&1 ||
	die "make modules_install failed (see $log)"
cp arch/x86/boot/bzImage "$dir/bzImage.tmp"
mv "$dir/bzImage.tmp" "$dir/bzImage"
echo "$release" >"$dir/release"
filever=$(file -bL "$dir/bzImage" | sed -n 's/.*, version \([^ ]*\) .*/\1/p')
[ "$filever" = "$release" ] ||
	die "bzImage says version '$filever', make kernelrelease says '$release'"
echo "$key" >"$dir/key"
msg "built $release in $((($(date +%s) - start) / 60)) min"
report
