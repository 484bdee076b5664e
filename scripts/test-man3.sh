#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-man3.sh - the hand-written manual pages: the libraries'
# (Documentation/man/man3), the devices' (man4) and dlm(7), installed by
# make install-libdlm, install-libfmpl, install-libawgstar and
# install-tools into a DESTDIR:
#   - every function that libdlm.so, libfmpl.so and libawgstar.so export
#     is found by man(1) in section 3, and the page it leads to names it
#     in NAME and declares it in SYNOPSIS;
#   - every page renders without a groff warning, has the sections of a
#     library page, and its footer carries its library's current version
#     (the installed pkg-config file's);
#   - each SYNOPSIS, as rendered, compiles after the installed header with
#     -Werror (a prototype that drifts from the header is a conflicting
#     declaration), and each complete program in EXAMPLES compiles and
#     links against the installed library;
#   - every ioctl and every struct member of a device's uapi header is
#     named on its section-4 page;
#   - every page of ours that a SEE ALSO names is installed.
# TAP output.
set -uo pipefail
shopt -s nullglob
top=$(cd "$(dirname "$0")/.." && pwd)
O=${O:-$top/build}
CC=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root
pre=$root/usr/local
mandir=$pre/share/man
# library:header:page prefix:device page (uapi/linux/DEVICE.h, DEVICE.4)
libs=(dlm:dlm.h:dlm_:dlmem fmpl:fmpl.h:fmpl_:fmpl awgstar:awgstar.h:awg_:awgstar)
n=0 fail=0

# shellcheck source=scripts/tap-check.sh
. "$top/scripts/tap-check.sh"

install_all() {
	make -s -C "$top" O="$O" install-libdlm install-libfmpl \
		install-libawgstar install-tools DESTDIR="$root" \
		>"$tmp/make.log" 2>&1 || { cat "$tmp/make.log"; return 1; }
	local f bad=0
	for f in "$top"/Documentation/man/man[347]/*.[347]; do
		test -f "$mandir/man${f##*.}/${f##*/}" ||
			{ echo "${f#"$top"/} not installed"; bad=1; }
	done
	return $bad
}

# render FILE: the page as plain ASCII text, no line wrapped.
render() {
	(cd "$mandir" && LC_ALL=C groff -t -man -Tascii -rLL=250n -P -cbou "$1")
}

# section TEXT-FILE NAME: the body of section NAME of a rendered page.
section() {
	awk -v s="$2" '/^[A-Z]/ { on = ($0 == s); next } on' "$1"
}

# The page FILE leads to (a link page holds ".so man3/PAGE.3").
target() {
	local so
	so=$(sed -n 's/^\.so //p' "$1")
	if [[ -n $so ]]; then echo "$mandir/$so"; else echo "$1"; fi
}

exports() {	# exports LIB: the functions libLIB.so exports
	nm -D --defined-only "$pre/lib/lib$1.so" | awk '$2 == "T" { print $3 }'
}

functions_ok() {	# functions_ok LIB: each export has a page naming it
	local lib=$1 fn page real bad=0 count=0
	for fn in $(exports "$lib"); do
		count=$((count + 1))
		page=$(man -M "$mandir" -w 3 "$fn" 2>&1) ||
			{ echo "man -w 3 $fn: $page"; bad=1; continue; }
		real=$(target "$page")
		render "$real" >"$tmp/page.txt" || { bad=1; continue; }
		section "$tmp/page.txt" NAME | grep -qE "(^|[ ,])$fn(,| -)" ||
			{ echo "$fn: ${real##*/} does not name it in NAME"; bad=1; }
		section "$tmp/page.txt" SYNOPSIS | grep -qE "[ *]$fn\(" ||
			{ echo "$fn: ${real##*/} does not declare it in SYNOPSIS"; bad=1; }
	done
	((count > 0)) || { echo "lib$lib.so exports no function"; bad=1; }
	return $bad
}

# The pages that are not links.
pages() {
	local f
	for f in "$mandir"/man3/*.3 "$mandir"/man4/*.4 "$mandir"/man7/*.7; do
		grep -q '^\.so ' "$f" || echo "$f"
	done
}

# lib_of PAGE: the library whose footer the page must carry.
lib_of() {
	local b=${1##*/} l lib h p d
	for l in "${libs[@]}"; do
		IFS=: read -r lib h p d <<<"$l"
		[[ $b == "$p"* || $b == lib$lib.3 || $b == $d.4 ]] &&
			{ echo "$lib"; return; }
	done
	echo dlm	# dlm(7): the project's version is libdlm's
}

form_ok() {	# form_ok PAGE: groff-clean, sections, version
	local page=$1 w s lib ver bad=0 secs
	w=$(cd "$mandir" && LC_ALL=C groff -t -man -ww -z "$page" 2>&1)
	[[ -z $w ]] || { echo "groff warnings: $w"; bad=1; }
	secs=(NAME DESCRIPTION "SEE ALSO")
	case $page in
	*.3) secs+=(LIBRARY SYNOPSIS "RETURN VALUE") ;;
	*.4) secs+=(SYNOPSIS IOCTLS ERRORS) ;;
	esac
	for s in "${secs[@]}"; do
		grep -q "^\.SH \"\{0,1\}$s\"\{0,1\}$" "$page" || { echo "no section $s"; bad=1; }
	done
	lib=$(lib_of "$page")
	ver=$(sed -n 's/^Version: //p' "$pre/lib/pkgconfig/$lib.pc")
	grep -q "^\.TH [A-Z0-9_]* [347] [0-9-]* \"lib$lib $ver\" \"DLM" "$page" ||
		{ echo "footer is not \"lib$lib $ver\": $(grep '^\.TH' "$page")"; bad=1; }
	return $bad
}

synopsis_ok() {	# synopsis_ok PAGE: what SYNOPSIS shows compiles
	local page=$1 lib c=$tmp/synopsis.c
	[[ $page == *.3 ]] || return 0
	lib=$(lib_of "$page")
	render "$page" >"$tmp/page.txt" || return 1
	section "$tmp/page.txt" SYNOPSIS >"$c"
	grep -q '(' "$c" || { echo "SYNOPSIS declares nothing"; return 1; }
	# -include: the page may show only its own header's part
	$CC -std=gnu11 -Wall -Wextra -Werror -fsyntax-only -I"$pre/include" \
		-include "$(header_of "$lib")" "$c" 2>&1 || { cat -n "$c"; return 1; }
}

header_of() {
	local l lib h p d
	for l in "${libs[@]}"; do
		IFS=: read -r lib h p d <<<"$l"
		[[ $lib == "$1" ]] && echo "$pre/include/$h"
	done
}

# examples_ok PAGE: each complete program of its EXAMPLES
# (scripts/man-examples.sh) compiles and links against the installed
# library.
examples_ok() {
	local page=$1 lib src bad=0
	lib=$(lib_of "$page")
	rm -rf "$tmp/ex"
	while read -r src; do
		$CC -std=gnu11 -Wall -Wextra -Werror -I"$pre/include" -I"$top/uapi" \
			-o "${src%.c}" "$src" -L"$pre/lib" -l"$lib" -lm -pthread \
			2>&1 || { echo "${src##*/}:"; cat -n "$src"; bad=1; }
		echo "${page##*/}" >>"$tmp/examples"
	done < <("$top/scripts/man-examples.sh" "$tmp/ex" "$page")
	return $bad
}

# uapi_ok PAGE: a device page names every ioctl of its uapi header and
# every member of the header's structs.
uapi_ok() {
	local page=$1 h w bad=0
	[[ $page == *.4 ]] || return 0
	h=$(basename "$page" .4).h
	render "$page" >"$tmp/dev.txt" || return 1
	for w in $(sed -n 's/^#define \([A-Z_]*_IOC_[A-Z0-9_]*\).*/\1/p' "$top/uapi/linux/$h") \
		 $(awk '/^struct [a-z_0-9]+ \{/ { on = 1; next }
			on && /^\};/ { on = 0 }
			on && /^\t[a-z_0-9 ]+[ *]+[a-z_0-9]+(\[[^]]*\])?;/ {
				l = $0; sub(/\[.*/, "", l); sub(/;.*/, "", l)
				n = split(l, a, /[ *\t]+/); print a[n] }' \
			"$top/uapi/linux/$h" | sort -u); do
		grep -qw -- "$w" "$tmp/dev.txt" ||
			{ echo "$h: $w is not on ${page##*/}"; bad=1; }
	done
	return $bad
}

page_ok() {
	local bad=0
	form_ok "$1" || bad=1
	uapi_ok "$1" || bad=1
	synopsis_ok "$1" || bad=1
	examples_ok "$1" || bad=1
	return $bad
}

see_also_ok() {	# every page of ours named in a SEE ALSO is installed
	local page ref name sec bad=0
	while read -r page; do
		render "$page" >"$tmp/page.txt" || return 1
		while read -r ref; do
			name=${ref%%(*} sec=${ref#*(} sec=${sec%)}
			case $name in
			dlm | dlm_* | dlmd | dlm-memserver | dlmctl | dlmem | fmpl* | \
			libfmpl | awg_* | awgstar | awgstard | libawgstar) ;;
			*) continue ;;
			esac
			man -M "$mandir" -w "$sec" "$name" >/dev/null 2>&1 ||
				{ echo "${page##*/} names $ref: not installed"; bad=1; }
		done < <(section "$tmp/page.txt" "SEE ALSO" |
			 grep -oE '[a-z][a-z0-9_-]*\([0-9]\)')
	done < <(pages)
	return $bad
}

pages_all_ok() {
	local page bad=0 out np=0 l lib h p d
	: >"$tmp/examples"
	while read -r page; do
		np=$((np + 1))
		out=$(page_ok "$page" 2>&1) || { echo "${page##*/}:"; echo "$out"; bad=1; }
	done < <(pages)
	echo "$np pages, $(wc -l <"$tmp/examples") example programs compiled"
	# every library has a page with a complete program
	for l in "${libs[@]}"; do
		IFS=: read -r lib h p d <<<"$l"
		grep -q "^$p\|^lib$lib\.3" "$tmp/examples" ||
			{ echo "no example program on a lib$lib page"; bad=1; }
	done
	return $bad
}

echo "TAP version 13"
echo "1..$((${#libs[@]} + 3))"
check "make install-lib{dlm,fmpl,awgstar} install-tools DESTDIR=...: every page in share/man" install_all
for l in "${libs[@]}"; do
	IFS=: read -r lib h p d <<<"$l"
	check "lib$lib.so: every exported function has a page that names it in NAME and SYNOPSIS" \
		functions_ok "$lib"
done
check "every page: no groff warning, its section's headings, its library's version; SYNOPSIS and EXAMPLES programs compile; device pages name their uapi" \
	pages_all_ok
check "SEE ALSO names only pages that are installed" see_also_ok
exit $fail
