# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# tap-check.sh - check(), the TAP step of the native test scripts
# (sourced).  The sourcing script sets n=0 fail=0 first.
#
#   check DESCRIPTION CMD...   run CMD: "ok N - DESCRIPTION" if it
#                              succeeds, else "not ok N - ..." and fail=1;
#                              its output follows as "# " lines either way

check() {
	local what=$1 out
	shift
	n=$((n + 1))
	if out=$("$@" 2>&1); then
		echo "ok $n - $what"
	else
		echo "not ok $n - $what"
		# shellcheck disable=SC2034 # the sourcing script reads it
		fail=1
	fi
	[[ -z $out ]] || echo "$out" | sed 's/^/# /'
}
