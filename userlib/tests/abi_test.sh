#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# abi_test.sh [BUILD_DIR] - libdlm as a library, natively (TAP): soname,
# only the public API exported (shared and static), dlm.h standalone in C
# and C++, building matvec through pkg-config and statically, the error a
# program prints when /dev/dlm is missing, and make install-libdlm.
# BUILD_DIR defaults to $LIBDLM_O (set by userlib.mk), else build/.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
O=${1:-${LIBDLM_O:-$top/build}}
lib=$O/lib
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 fail=0
api="dlm_alloc dlm_free dlm_last_error dlm_shutdown dlm_startup dlm_stats dlm_strerror"

ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); echo "not ok $n - $*"; fail=1; }
skip() { n=$((n + 1)); echo "ok $n - $* # SKIP"; }
check() {	# check DESCRIPTION CMD... : ok if CMD succeeds
	local d=$1
	shift
	if "$@" >"$tmp/out" 2>&1; then ok "$d"; else
		notok "$d"; sed 's/^/# /' "$tmp/out"; fi
}

echo "TAP version 13"
echo "1..15"

soname=$(readelf -d "$lib/libdlm.so.0" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
check "libdlm.so.0 has soname libdlm.so.0 (not the lock manager's libdlm.so.3)" \
	test "$soname" = libdlm.so.0

got=$(nm -D --defined-only "$lib/libdlm.so.0" | awk '$2 == "T" {print $3}' | sort | xargs)
check "libdlm.so.0 exports exactly: $api" test "$got" = "$api"

got=$(nm -g --defined-only "$lib/libdlm.a" | awk 'NF == 3 {print $3}' | sort | xargs)
check "libdlm.a defines exactly the same global symbols" test "$got" = "$api"

printf '#include <dlm.h>\nint main(void) { return dlm_alloc(0) != 0; }\n' >"$tmp/h.c"
check "dlm.h compiles alone: C99 -pedantic -Wall -Wextra -Werror" \
	cc -std=c99 -pedantic -Wall -Wextra -Werror -I"$top/userlib/include" \
	-c -o "$tmp/h.o" "$tmp/h.c"
if command -v g++ >/dev/null; then
	cp "$tmp/h.c" "$tmp/h.cc"
	check "dlm.h compiles as C++ (extern \"C\")" \
		g++ -Wall -Wextra -Werror -I"$top/userlib/include" -c -o "$tmp/hpp.o" "$tmp/h.cc"
else
	skip "dlm.h as C++: no g++"
fi

# pkg-config picks dlm-uninstalled.pc from the build tree.
pc() { PKG_CONFIG_PATH=$lib/pkgconfig pkg-config "$@"; }
build_pc() {
	cc -o "$tmp/matvec" "$top/userlib/examples/matvec.c" $(pc --cflags --libs dlm) &&
		ldd "$tmp/matvec" | grep -c >/dev/null "libdlm.so.0 => $lib/libdlm.so.0"
}
check "cc matvec.c \$(pkg-config --cflags --libs dlm) links the build tree's libdlm.so.0" build_pc
# Its --help is answered before dlm_startup(), which needs /dev/dlm.
matvec_help() {
	LD_LIBRARY_PATH=$lib "$tmp/matvec" --help >"$tmp/out" 2>"$tmp/err" &&
		grep -q "^usage: matvec \[N\]" "$tmp/out" && ! test -s "$tmp/err"
}
check "matvec --help: usage on stdout, status 0, nothing on stderr" matvec_help

build_static() {
	cc -static-libgcc -o "$tmp/matvec-static" "$top/userlib/examples/matvec.c" \
		-I"$top/userlib/include" "$lib/libdlm.a" -pthread &&
		! ldd "$tmp/matvec-static" | grep -c >/dev/null libdlm &&
		! nm "$tmp/matvec-static" | grep -c >/dev/null ' T dlmlib_'
}
check "matvec links statically with libdlm.a, internals stay local" build_static

# The Fig. 2 program: only the dlm specifier, plain cc, even statically
# (the header's reference brings in the code that maps the arrays).
fig2_static() {
	cc -DN=100 -o "$tmp/fig2" "$top/userlib/examples/matvec-fig2.c" \
		-I"$top/userlib/include" "$lib/libdlm.a" -pthread &&
		readelf -SW "$tmp/fig2" | grep -c >/dev/null ' dlm_bss  *NOBITS ' &&
		nm "$tmp/fig2" | grep -c >/dev/null ' T dlm_startup$'
}
check "matvec-fig2.c (dlm arrays) builds with plain cc, statically too, into a dlm_bss no-bits section" fig2_static
if [[ -e /dev/dlm ]]; then
	skip "dlm arrays without /dev/dlm: /dev/dlm exists here"
else
	fig2_nodev() {
		"$tmp/fig2" >"$tmp/out" 2>"$tmp/err"
		[[ $? == 127 && ! -s $tmp/out ]] &&
			grep -q "dlm arrays.*cannot open /dev/dlm.*modprobe dlmem" "$tmp/err"
	}
	check "dlm arrays without /dev/dlm: exit 127 before main(), saying to load dlmem" fig2_nodev
	sed 's/^/# /' "$tmp/err"
fi

# The interposer exports the allocator and nothing of libdlm's.
pre=$lib/libdlm-preload.so
interposed="aligned_alloc calloc free malloc malloc_usable_size memalign mmap mmap64 mremap munmap posix_memalign pvalloc realloc reallocarray valloc"
got=$(nm -D --defined-only "$pre" | awk '$2 == "T" || $2 == "W" || $2 == "i" {print $3}' | sort | xargs)
check "libdlm-preload.so exports exactly: $interposed" test "$got" = "$interposed"
# Small allocations never touch /dev/dlm: a whole program runs as usual.
small_only() {
	LD_PRELOAD=$pre sort -n <<<$'3\n1\n2' | xargs | grep -qx '1 2 3'
}
check "under libdlm-preload.so a program with only small allocations runs as usual" small_only
if [[ -e /dev/dlm ]]; then
	skip "libdlm-preload.so without /dev/dlm: /dev/dlm exists here"
else
	pre_nodev() {
		cat >"$tmp/big.c" <<-'EOF'
		#include <stdio.h>
		#include <stdlib.h>
		#include <string.h>
		int main(void)
		{
			char *p = malloc(8 << 20);

			if (p)
				memset(p, 1, 8 << 20);
			printf("%s\n", p ? "local" : "ENOMEM");
			return 0;
		}
		EOF
		cc -o "$tmp/big" "$tmp/big.c" &&
			[[ $(LD_PRELOAD=$pre "$tmp/big" 2>"$tmp/err") == ENOMEM ]] &&
			grep -q "no DLM space: cannot open /dev/dlm.*modprobe dlmem.*DLM_PRELOAD_FALLBACK=1" "$tmp/err" &&
			[[ $(LD_PRELOAD=$pre DLM_PRELOAD_FALLBACK=1 "$tmp/big" 2>/dev/null) == local ]]
	}
	check "libdlm-preload.so without /dev/dlm: big malloc is ENOMEM with the fix named; DLM_PRELOAD_FALLBACK=1 uses glibc" pre_nodev
	sed 's/^/# /' "$tmp/err"
fi

if [[ -e /dev/dlm ]]; then
	skip "matvec without /dev/dlm: /dev/dlm exists here"
else
	nodev() {
		! "$O/bin/matvec" 64 -- -f /dev/null 2>"$tmp/err" &&
			! "$O/bin/matvec" 64 2>"$tmp/err" &&
			grep -q "cannot open /dev/dlm.*modprobe dlmem" "$tmp/err"
	}
	check "matvec without /dev/dlm fails, saying to load dlmem" nodev
	sed 's/^/# /' "$tmp/err"
fi

install_test() {
	local d=$tmp/root
	make -s -C "$top" O="$O" install-libdlm DESTDIR="$d" &&
	for f in lib/libdlm.so.0 lib/libdlm.so lib/libdlm.a include/dlm.h \
		 lib/pkgconfig/dlm.pc lib/libdlm-preload.so; do
		test -e "$d/usr/local/$f" || { echo "missing /usr/local/$f"; return 1; }
	done &&
	test "$(PKG_CONFIG_LIBDIR=$d/usr/local/lib/pkgconfig pkg-config --variable=prefix dlm)" = /usr/local &&
	cc -o "$tmp/matvec-inst" "$top/userlib/examples/matvec.c" \
		$(PKG_CONFIG_LIBDIR=$d/usr/local/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$d \
		  pkg-config --cflags --libs dlm)
}
check "make install-libdlm DESTDIR=...: /usr/local layout, dlm.pc usable" install_test

exit $fail
