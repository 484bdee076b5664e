#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# install-deps.sh - install everything DLM needs on Debian 12, idempotently.
#
# Usage: scripts/install-deps.sh [--check]
#   --check   only report what is missing; exit 1 if anything is.
#
# Installs the Debian 6.1 kernel image and headers (the ABI the VM tests
# boot), QEMU, virtme-ng from PyPI at a pinned version, the kernel's own
# checkpatch/kselftest sources (linux-source-6.1), sparse, DKMS, rdma-core,
# MPI and the test tools.  Run as root (make deps does this).
set -euo pipefail

VIRTME_NG_VERSION=1.42
KVER_DEFAULT=6.1.0-56-amd64
KVER_NEW=6.12.117+deb12-amd64

PKGS=(
	# build
	build-essential gcc-multilib pkg-config xz-utils kmod
	"linux-image-$KVER_DEFAULT" "linux-headers-$KVER_DEFAULT"
	# the newer kernel we also support and test
	"linux-image-$KVER_NEW" "linux-headers-$KVER_NEW"
	linux-source-6.1 sparse dkms shellcheck
	# building the module in a kernel tree (scripts/test-intree.sh)
	flex bison bc libelf-dev libssl-dev
	# VM test loop
	qemu-system-x86 busybox-static iproute2 procps
	# daemon: generic netlink; transports (RDMA verbs, MPI) and their tools
	libnl-3-dev libnl-genl-3-dev
	rdma-core ibverbs-utils libibverbs-dev librdmacm-dev rdmacm-utils perftest
	openmpi-bin libopenmpi-dev mpich libmpich-dev
	# test and comparison tools
	nbd-server nbd-client fio stress-ng mbw sysbench trinity
	python3-matplotlib
	# manual pages (make man): made from --help, checked with groff and man
	help2man groff-base man-db
)

check_only=0
case "${1:-}" in
--check) check_only=1 ;;
-h|--help) sed -n '4,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
"") ;;
*) echo "install-deps.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
esac

missing=()
for p in "${PKGS[@]}"; do
	[[ $p == \#* ]] && continue
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
	     grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done

# virtme-ng: the pip of the python3 on PATH, pinned.
have_vng=$(python3 -m pip show virtme-ng 2>/dev/null |
	   sed -n 's/^Version: //p' || true)

if ((check_only)); then
	rc=0
	if ((${#missing[@]})); then
		echo "missing Debian packages: ${missing[*]}"
		rc=1
	fi
	if [[ $have_vng != "$VIRTME_NG_VERSION" ]]; then
		echo "missing virtme-ng $VIRTME_NG_VERSION (have: ${have_vng:-none})"
		rc=1
	fi
	((rc)) || echo "all dependencies present"
	exit $rc
fi

need=0
((${#missing[@]})) && need=1
[[ $have_vng != "$VIRTME_NG_VERSION" ]] && need=1
if ((need)) && [[ $(id -u) != 0 ]]; then
	echo "install-deps.sh: missing dependencies; run as root (sudo make deps)" >&2
	exit 1
fi

if ((${#missing[@]})); then
	echo "installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" \
		>/dev/null
else
	echo "Debian packages: all present"
fi

if [[ $have_vng != "$VIRTME_NG_VERSION" ]]; then
	echo "installing virtme-ng $VIRTME_NG_VERSION"
	python3 -m pip install -q --root-user-action=ignore \
		"virtme-ng==$VIRTME_NG_VERSION"
else
	echo "virtme-ng $VIRTME_NG_VERSION: present"
fi
# pyenv installs console scripts behind shims that need a rehash.
if command -v pyenv >/dev/null 2>&1; then
	pyenv rehash || true
fi
