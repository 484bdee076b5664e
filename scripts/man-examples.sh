#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# man-examples.sh OUTDIR PAGE... - write each complete C program of the
# pages' EXAMPLES (an .EX/.EE block whose first line is #include) to
# OUTDIR/NAME-K.c (NAME: the page's file name without its section, K: the
# program's number on that page) as a reader sees it: rendered by plain
# troff, so the page's escapes (\e, \-) become C again.  Prints the files
# written, one per line.  Used by scripts/test-man3.sh (they compile) and
# selftests/man/examples_test.sh (they run).
set -euo pipefail
out=${1:?usage: man-examples.sh OUTDIR PAGE...}
shift
mkdir -p "$out"
for page in "$@"; do
	name=$(basename "$page")
	name=${name%.*}
	awk -v pre="$out/$name" '
		/^\.EX/ { buf = ""; on = 1; first = 1; next }
		/^\.EE/ { if (on && prog) { k++; f = pre "-" k ".roff"
			  print ".ll 250n\n.nf\n" buf > f; close(f) }
			  on = 0; prog = 0; next }
		on { if (first) { prog = ($0 ~ /^#include/); first = 0 }
		     buf = buf $0 "\n" }' "$page"
	for roff in "$out/$name"-*.roff; do
		[[ -e $roff ]] || continue
		LC_ALL=C groff -Tascii -P -cbou "$roff" >"${roff%.roff}.c"
		rm -f "$roff"
		echo "${roff%.roff}.c"
	done
done
