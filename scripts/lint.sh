#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# lint.sh [KDIR] - quality gates on kmod/ and uapi/, as TAP:
#   checkpatch.pl --no-tree --strict on every kernel source file,
#   sparse (make C=2) on the module, kernel-doc on the kernel sources and
#   the libraries' headers, shellcheck on the shell scripts.
# checkpatch and kernel-doc come from Debian's linux-source-6.1, extracted
# into build/.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
KDIR=${1:-/usr/src/linux-headers-6.1.0-56-amd64}
TAR=${LINUX_SRC_TAR:-/usr/src/linux-source-6.1.tar.xz}
tools=$top/build/linux-tools
n=0 fail=0

ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); echo "not ok $n - $*"; fail=1; }
skip() { n=$((n + 1)); echo "ok $n - $* # SKIP"; }

ksrc=()
for f in "$top"/kmod/*.[ch] "$top"/uapi/linux/*.h; do
	[[ $f == *.mod.c ]] || ksrc+=("${f#"$top"/}")
done
mapfile -t shsrc < <(cd "$top" && ls scripts/*.sh scripts/run-tap \
	vm-images/vm-run vm-images/dmesg-check vm-images/*.sh \
	selftests/*.sh selftests/*/*.sh userlib/tests/fmpl*.sh 2>/dev/null)

echo "TAP version 13"
echo "1..$((${#ksrc[@]} + 2 + ${#shsrc[@]}))"

if [[ ! -x $tools/scripts/kernel-doc && -f $TAR ]]; then
	mkdir -p "$tools"
	tar -C "$tools" -xf "$TAR" --strip-components=1 \
		linux-source-6.1/scripts/checkpatch.pl \
		linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch \
		linux-source-6.1/scripts/kernel-doc
fi
for f in "${ksrc[@]}"; do
	if [[ ! -x $tools/scripts/checkpatch.pl ]]; then
		skip "checkpatch $f: $TAR missing (make deps)"
		continue
	fi
	if out=$(cd "$top" && "$tools/scripts/checkpatch.pl" --no-tree \
		 --strict --quiet --show-types -f "$f" 2>&1) && [[ -z $out ]]; then
		ok "checkpatch --strict $f"
	else
		notok "checkpatch --strict $f"
		sed 's/^/# /' <<<"$out"
	fi
done

# Every /** comment must be valid kernel-doc describing every member and
# parameter, as scripts/kernel-doc checks for the kernel's documentation.
kdoc=("${ksrc[@]}" userlib/include/dlm.h userlib/include/fmpl.h
      userlib/include/awgstar.h)
if [[ ! -x $tools/scripts/kernel-doc ]]; then
	skip "kernel-doc: $TAR missing (make deps)"
elif out=$(cd "$top" && perl "$tools/scripts/kernel-doc" -none -Werror \
	   "${kdoc[@]}" 2>&1) && [[ -z $out ]]; then
	ok "kernel-doc on kmod/, uapi/ and the libraries' headers"
else
	notok "kernel-doc on kmod/, uapi/ and the libraries' headers"
	sed 's/^/# /' <<<"$out"
fi

if ! command -v sparse >/dev/null; then
	skip "sparse: not installed (make deps)"
elif [[ ! -d $KDIR ]]; then
	skip "sparse: no kernel tree at $KDIR"
else
	# C=2 checks every file whether rebuilt or not; sparse's findings
	# are the lines naming a source file with "warning:" or "error:".
	out=$(make -s -C "$KDIR" M="$top/kmod" C=2 modules 2>&1)
	rc=$?
	bad=$(grep -E '(warning|error):' <<<"$out")
	if ((rc == 0)) && [[ -z $bad ]]; then
		ok "sparse (C=2) on kmod/"
	else
		notok "sparse (C=2) on kmod/"
		sed 's/^/# /' <<<"$out"
	fi
fi

for f in "${shsrc[@]}"; do
	if ! command -v shellcheck >/dev/null; then
		skip "shellcheck $f: not installed (make deps)"
	elif out=$(cd "$top" && shellcheck -x -S warning "$f" 2>&1); then
		ok "shellcheck $f"
	else
		notok "shellcheck $f"
		sed 's/^/# /' <<<"$out"
	fi
done
exit $fail
