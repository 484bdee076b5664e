#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# demo.sh - run inside the VM by `make demo`: load dlmem.ko, show what the
# device supports, run dlm-demo, unload.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${DLM_BUILD:-$top/build}/bin
insmod "$top/kmod/dlmem.ko"
echo "== dlmctl info"
"$bin/dlmctl" info
echo "== dlm-demo"
"$bin/dlm-demo"
rmmod dlmem
echo "== kernel log"
dmesg | grep dlmem
