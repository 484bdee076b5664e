#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-man.sh - the programs' manual pages (Documentation/man/man.mk):
# make install-tools and install-libfmpl into a DESTDIR lay out the
# programs and their pages; each installed program runs; each page is
# found by man(1), renders without a groff warning, names its program
# (not help2man's placeholder), carries the program's current version,
# and shows every option of the program's --help as an item of its own;
# every page of ours that a SEE ALSO names is installed.  TAP output.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
O=${O:-$top/build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root
pre=$root/usr/local
mandir=$pre/share/man
# program:section:directory it is installed in
progs=(dlmd:8:sbin dlm-memserver:8:sbin awgstard:8:sbin dlmctl:8:bin
       fmplrun:1:bin)
n=0 fail=0

# shellcheck source=scripts/tap-check.sh
. "$top/scripts/tap-check.sh"

install_all() {
	make -s -C "$top" O="$O" install-tools install-libfmpl DESTDIR="$root" \
		>"$tmp/make.log" 2>&1 || { cat "$tmp/make.log"; return 1; }
	local p name sec dir
	for p in "${progs[@]}"; do
		IFS=: read -r name sec dir <<<"$p"
		test -x "$pre/$dir/$name" || { echo "missing $dir/$name"; return 1; }
		test -f "$mandir/man$sec/$name.$sec" ||
			{ echo "missing share/man/man$sec/$name.$sec"; return 1; }
	done
	# dlmd runs its MPI builds from its own directory: beside it iff built
	for p in dlmd-openmpi dlmd-mpich; do
		if [[ -x $O/bin/$p ]]; then
			test -x "$pre/sbin/$p" || { echo "$p built but not installed"; return 1; }
		else
			test ! -e "$pre/sbin/$p" || { echo "$p installed but not built"; return 1; }
		fi
	done
}

# The options of a --help text: the part of each option line before the
# description (two or more spaces), one per line.
help_options() {
	sed -n -E 's/^ {2,8}(-[^ ].*)$/\1/p' | sed -E 's/ {2,}.*//'
}

page_ok() {	# page_ok NAME SECTION DIR
	local name=$1 sec=$2 dir=$3 page=$mandir/man$2/$1.$2 text ver opt w bad=0
	# man finds it in the installed hierarchy
	[[ $(man -M "$mandir" -w "$sec" "$name" 2>&1) == "$page" ]] ||
		{ echo "man -w $sec $name: $(man -M "$mandir" -w "$sec" "$name" 2>&1)"; bad=1; }
	w=$(LC_ALL=C groff -t -man -ww -z "$page" 2>&1)
	[[ -z $w ]] || { echo "groff warnings: $w"; bad=1; }
	grep -q "^$name \\\\- [A-Za-z]" "$page" ||
		{ echo "NAME is not '$name \\- what it does'"; bad=1; }
	for s in NAME SYNOPSIS DESCRIPTION OPTIONS "SEE ALSO"; do
		grep -q "^\.SH \"\{0,1\}$s\"\{0,1\}$" "$page" || { echo "no section $s"; bad=1; }
	done
	ver=$("$pre/$dir/$name" --version | head -n 1)
	[[ $ver =~ ^$name\ [0-9] ]] || { echo "--version: '$ver'"; bad=1; }
	grep -q "^\.TH .*\"${ver%% (*}\"" "$page" ||
		{ echo "the page is not of ${ver%% (*}: $(grep '^\.TH' "$page")"; bad=1; }
	# each option of --help is an item of its own in the rendered page
	text=$(MANWIDTH=200 man -l "$page" 2>/dev/null | sed -E 's/^ +//; s/ +$//')
	while IFS= read -r opt; do
		# the text before the description must be options and
		# placeholders only, or help2man takes words of it as the option
		if [[ ! $opt =~ ^(-[a-zA-Z]+(, |=[A-Z]+)?|--[a-z0-9-]+(=[A-Z]+)?|[][A-Z:_.]+,?|\ )+$ ]]; then
			echo "--help option line '$opt': description starts too close (want 2 spaces)"
			bad=1
		elif ! grep -qxF -- "$opt" <<<"$text"; then
			echo "option '$opt' of --help is not an item of the page"
			bad=1
		fi
	done < <("$pre/$dir/$name" --help | help_options)
	return $bad
}

see_also_ok() {	# every page of ours named in a SEE ALSO is installed
	local p name sec dir ref bad=0 ours=" "
	for p in "${progs[@]}"; do
		IFS=: read -r name sec dir <<<"$p"
		ours+="$name($sec) "
	done
	for p in "${progs[@]}"; do
		IFS=: read -r name sec dir <<<"$p"
		while read -r ref; do
			[[ $ours == *" ${ref%%(*}("* ]] || continue
			[[ $ours == *" $ref "* ]] || { echo "$name.$sec names $ref"; bad=1; }
		done < <(MANWIDTH=200 man -l "$mandir/man$sec/$name.$sec" 2>/dev/null |
			 sed -n '/^SEE ALSO/,/^[A-Z]/p' | grep -oE '[a-z][a-z-]*\([0-9]\)')
	done
	return $bad
}

echo "TAP version 13"
echo "1..$((${#progs[@]} + 2))"
check "make install-tools install-libfmpl DESTDIR=...: programs in sbin and bin, pages in share/man" install_all
for p in "${progs[@]}"; do
	IFS=: read -r name sec dir <<<"$p"
	check "$name($sec): found by man, no groff warning, its version, every --help option an item" \
		page_ok "$name" "$sec" "$dir"
done
check "SEE ALSO names only pages that are installed" see_also_ok
exit $fail
