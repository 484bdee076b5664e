#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fmpl_abi_test.sh [BUILD_DIR] - libfmpl as a library, natively (TAP):
# soname, exactly the API of fmpl.h exported (shared and static), fmpl.h
# standalone in C99 and C++, the example built through pkg-config and
# statically, and make install-libfmpl.
# BUILD_DIR defaults to $LIBDLM_O (set by userlib.mk), else build/.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
O=${1:-${LIBDLM_O:-$top/build}}
lib=$O/lib
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 fail=0
example=$top/userlib/examples/fmpl-pingpong.c

ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); echo "not ok $n - $*"; fail=1; }
check() {	# check DESCRIPTION CMD... : ok if CMD succeeds
	local d=$1
	shift
	if "$@" >"$tmp/out" 2>&1; then ok "$d"; else
		notok "$d"; sed 's/^/# /' "$tmp/out"; fi
}

echo "TAP version 13"
echo "1..9"

# The API: every fmpl_* function and object declared in fmpl.h.
api=$(sed -n -e 's/^[a-z].*[ *]\(fmpl_[a-z_]*\)(.*/\1/p' \
	-e 's/^extern const fmpl_op \(.*\);/\1/p' "$top/userlib/include/fmpl.h" |
	tr ', ' '\n\n' | grep '^fmpl_' | sort | xargs)

soname=$(readelf -d "$lib/libfmpl.so.0" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
check "libfmpl.so.0 has soname libfmpl.so.0" test "$soname" = libfmpl.so.0

exports() {
	local got
	got=$(nm -D --defined-only "$lib/libfmpl.so.0" | awk '$2 ~ /^[TDR]$/ {print $3}' | sort | xargs)
	[[ $(wc -w <<<"$api") -ge 40 ]] || { echo "API from fmpl.h: $api"; return 1; }
	[[ $got == "$api" ]] || { echo "exported: $got"; echo "fmpl.h:   $api"; return 1; }
}
check "libfmpl.so.0 exports exactly the functions and ops of fmpl.h" exports

static_syms() {
	local got
	got=$(nm -g --defined-only "$lib/libfmpl.a" | awk 'NF == 3 {print $3}' | sort | xargs)
	[[ $got == "$api" ]] || { echo "libfmpl.a: $got"; return 1; }
}
check "libfmpl.a defines exactly the same global symbols" static_syms

printf '#include <fmpl.h>\nint main(void) { return fmpl_init(0, 0, 1, 0) == FMPL_SUCCESS; }\n' >"$tmp/h.c"
check "fmpl.h compiles alone: C99 -pedantic -Wall -Wextra -Werror" \
	cc -std=c99 -pedantic -Wall -Wextra -Werror -I"$top/userlib/include" \
	-I"$top/uapi" -c -o "$tmp/h.o" "$tmp/h.c"
if command -v g++ >/dev/null; then
	cp "$tmp/h.c" "$tmp/h.cc"
	check "fmpl.h compiles as C++ (extern \"C\")" \
		g++ -Wall -Wextra -Werror -I"$top/userlib/include" -I"$top/uapi" \
		-c -o "$tmp/hpp.o" "$tmp/h.cc"
else
	ok "fmpl.h as C++: no g++ # SKIP"
fi

pc() { PKG_CONFIG_PATH=$lib/pkgconfig pkg-config "$@"; }
build_pc() {
	# shellcheck disable=SC2046 # pkg-config's words
	cc -Wall -Werror -o "$tmp/pp" "$example" $(pc --cflags --libs fmpl) &&
		ldd "$tmp/pp" >"$tmp/ldd" &&
		grep -q "libfmpl.so.0 => $lib/libfmpl.so.0" "$tmp/ldd"
}
check "cc fmpl-pingpong.c \$(pkg-config --cflags --libs fmpl) links the build tree's libfmpl.so.0" build_pc

build_static() {
	# shellcheck disable=SC2046
	cc -o "$tmp/pp-static" "$example" $(pc --cflags fmpl) "$lib/libfmpl.a" -lm || return 1
	ldd "$tmp/pp-static" >"$tmp/ldd" 2>&1
	nm "$tmp/pp-static" >"$tmp/nm" &&
		! grep -q libfmpl "$tmp/ldd" &&
		! grep -q ' [TD] fmpllib_' "$tmp/nm" &&
		grep -q ' T fmpl_init$' "$tmp/nm"
}
check "fmpl-pingpong links statically with libfmpl.a, internals stay local" build_static

tool_help() {
	"$O/bin/fmplrun" --help | grep >/dev/null '^Usage: fmplrun -np N'
}
check "fmplrun --help" tool_help

install_test() {
	local d=$tmp/root f
	make -s -C "$top" O="$O" install-libfmpl DESTDIR="$d" || return 1
	for f in lib/libfmpl.so.0 lib/libfmpl.so lib/libfmpl.a include/fmpl.h \
		 include/linux/fmpl.h lib/pkgconfig/fmpl.pc bin/fmplrun \
		 share/man/man1/fmplrun.1; do
		test -e "$d/usr/local/$f" || { echo "missing /usr/local/$f"; return 1; }
	done
	test "$(PKG_CONFIG_LIBDIR=$d/usr/local/lib/pkgconfig pkg-config --variable=prefix fmpl)" = /usr/local || return 1
	# shellcheck disable=SC2046
	cc -o "$tmp/pp-inst" "$example" \
		$(PKG_CONFIG_LIBDIR=$d/usr/local/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$d \
		  pkg-config --cflags --libs fmpl)
}
check "make install-libfmpl DESTDIR=...: /usr/local layout with <linux/fmpl.h>, fmpl.pc usable" install_test

exit $fail
