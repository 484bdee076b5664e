#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# awgstar_abi_test.sh [BUILD_DIR] - libawgstar as a library, natively
# (TAP): soname, exactly the API of awgstar.h exported (shared and
# static), awgstar.h standalone in C99 and C++, a program built through
# pkg-config and statically, and make install-libawgstar.
# BUILD_DIR defaults to $LIBDLM_O (set by userlib.mk), else build/.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
O=${1:-${LIBDLM_O:-$top/build}}
lib=$O/lib
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 fail=0

ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); echo "not ok $n - $*"; fail=1; }
check() {	# check DESCRIPTION CMD... : ok if CMD succeeds
	local d=$1
	shift
	if "$@" >"$tmp/out" 2>&1; then ok "$d"; else
		notok "$d"; sed 's/^/# /' "$tmp/out"; fi
}

echo "TAP version 13"
echo "1..8"

# The API: every awg_* function declared in awgstar.h.
api=$(sed -n 's/^\(int\|void\) \**\(awg_[a-z0-9_]*\)(.*/\2/p' \
	"$top/userlib/include/awgstar.h" | sort | xargs)

# A program using the library (a board is not needed to build it).
cat >"$tmp/prog.c" <<'PROG'
#include <stdio.h>
#include <awgstar.h>

int main(void)
{
	struct awg_handle *h;
	uint32_t id;

	if (awg_open(NULL, &h) < 0) {
		perror("awg_open");
		return 1;
	}
	awg_node_id(h, &id);
	printf("node %u\n", id);
	return awg_close(&h) < 0;
}
PROG

soname=$(readelf -d "$lib/libawgstar.so.0" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
check "libawgstar.so.0 has soname libawgstar.so.0" test "$soname" = libawgstar.so.0

exports() {
	local got
	got=$(nm -D --defined-only "$lib/libawgstar.so.0" | awk '$2 ~ /^[TDR]$/ {print $3}' | sort | xargs)
	[[ $(wc -w <<<"$api") -ge 25 ]] || { echo "API from awgstar.h: $api"; return 1; }
	[[ $got == "$api" ]] || { echo "exported:  $got"; echo "awgstar.h: $api"; return 1; }
}
check "libawgstar.so.0 exports exactly the functions of awgstar.h" exports

static_syms() {
	local got
	got=$(nm -g --defined-only "$lib/libawgstar.a" | awk 'NF == 3 {print $3}' | sort | xargs)
	[[ $got == "$api" ]] || { echo "libawgstar.a: $got"; return 1; }
}
check "libawgstar.a defines exactly the same global symbols" static_syms

printf '#include <awgstar.h>\nint main(void) { struct awg_handle *h; return awg_open(0, &h); }\n' >"$tmp/h.c"
check "awgstar.h compiles alone: C99 -pedantic -Wall -Wextra -Werror" \
	cc -std=c99 -pedantic -Wall -Wextra -Werror -I"$top/userlib/include" \
	-I"$top/uapi" -c -o "$tmp/h.o" "$tmp/h.c"
if command -v g++ >/dev/null; then
	cp "$tmp/h.c" "$tmp/h.cc"
	check "awgstar.h compiles as C++ (extern \"C\")" \
		g++ -Wall -Wextra -Werror -I"$top/userlib/include" -I"$top/uapi" \
		-c -o "$tmp/hpp.o" "$tmp/h.cc"
else
	ok "awgstar.h as C++: no g++ # SKIP"
fi

pc() { PKG_CONFIG_PATH=$lib/pkgconfig pkg-config "$@"; }
build_pc() {
	# shellcheck disable=SC2046 # pkg-config's words
	cc -Wall -Werror -o "$tmp/p" "$tmp/prog.c" $(pc --cflags --libs awgstar) &&
		ldd "$tmp/p" >"$tmp/ldd" || return 1
	grep -q "libawgstar.so.0 => $lib/libawgstar.so.0" "$tmp/ldd" || return 1
	# No board there: awg_open fails with ENOENT.
	! AWG_DEVICE=/nonexistent "$tmp/p" >"$tmp/p.out" 2>&1 &&
		grep -q 'awg_open: No such file' "$tmp/p.out"
}
check "cc prog.c \$(pkg-config --cflags --libs awgstar) links the build tree's libawgstar.so.0" build_pc

build_static() {
	# shellcheck disable=SC2046
	cc -o "$tmp/p-static" "$tmp/prog.c" $(pc --cflags awgstar) "$lib/libawgstar.a" || return 1
	ldd "$tmp/p-static" >"$tmp/ldd" 2>&1
	nm "$tmp/p-static" >"$tmp/nm" &&
		! grep -q libawgstar "$tmp/ldd" &&
		! grep -q ' [TD] awglib_' "$tmp/nm" &&
		grep -q ' T awg_open$' "$tmp/nm"
}
check "a program links statically with libawgstar.a, internals stay local" build_static

install_test() {
	local d=$tmp/root f
	make -s -C "$top" O="$O" install-libawgstar DESTDIR="$d" || return 1
	for f in lib/libawgstar.so.0 lib/libawgstar.so lib/libawgstar.a include/awgstar.h \
		 include/linux/awgstar.h lib/pkgconfig/awgstar.pc; do
		test -e "$d/usr/local/$f" || { echo "missing /usr/local/$f"; return 1; }
	done
	test "$(PKG_CONFIG_LIBDIR=$d/usr/local/lib/pkgconfig pkg-config --variable=prefix awgstar)" = /usr/local || return 1
	# shellcheck disable=SC2046
	cc -o "$tmp/p-inst" "$tmp/prog.c" \
		$(PKG_CONFIG_LIBDIR=$d/usr/local/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$d \
		  pkg-config --cflags --libs awgstar)
}
check "make install-libawgstar DESTDIR=...: /usr/local layout with <linux/awgstar.h>, awgstar.pc usable" install_test

exit $fail
