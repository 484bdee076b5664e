#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-uapi.sh - the uapi headers compile on their own, as C and C++, for
# 64- and 32-bit x86, with the layout uapi/test-layout.c pins.  TAP output.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "TAP version 13"
echo "1..7"
n=0 fail=0

try() {	# try DESCRIPTION COMPILER ARGS...
	local what=$1
	shift
	n=$((n + 1))
	if out=$("$@" -I"$top/uapi" -o "$tmp/t$n" 2>&1); then
		echo "ok $n - $what"
	else
		echo "not ok $n - $what"
		echo "$out" | sed 's/^/# /'
		fail=1
	fi
}

try "dlmem.h alone, C89 pedantic" \
	gcc -std=gnu89 -pedantic -Wall -Werror -fsyntax-only -x c \
	"$top/uapi/linux/dlmem.h"
try "fmpl.h alone, C89 pedantic" \
	gcc -std=gnu89 -pedantic -Wall -Werror -fsyntax-only -x c \
	"$top/uapi/linux/fmpl.h"
try "awgstar.h alone, C89 pedantic" \
	gcc -std=gnu89 -pedantic -Wall -Werror -fsyntax-only -x c \
	"$top/uapi/linux/awgstar.h"
try "layout, C11, x86-64" gcc -std=c11 -Wall -Werror "$top/uapi/test-layout.c"
try "layout, C++, x86-64" g++ -std=c++17 -Wall -Werror -x c++ \
	"$top/uapi/test-layout.c"
if echo 'int main(void){return 0;}' |
   gcc -m32 -x c - -o "$tmp/m32" >/dev/null 2>&1; then
	try "layout, C11, i386 (same as 64-bit)" gcc -m32 -std=c11 -Wall \
		-Werror "$top/uapi/test-layout.c"
else
	n=$((n + 1))
	echo "ok $n - layout, i386 # SKIP no 32-bit libc (gcc-multilib)"
fi
n=$((n + 1))
if grep -nE '\b(u8|u16|u32|u64|bool|size_t|unsigned long|long)\b' \
	"$top"/uapi/linux/*.h | grep -vE '^[^:]+:[0-9]+:\s*\*' | grep -v '/\*' ; then
	echo "not ok $n - uapi uses only fixed-width __u types"
	fail=1
else
	echo "ok $n - uapi uses only fixed-width __u types"
fi
exit $fail
