# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# shellcheck disable=SC2034 # n and fail are the sourcing test's
#
# lib.sh - the TAP helper of the selftests/man scripts (sourced); they set
# n=0 and fail=0.

result() {	# result OK DESCRIPTION [DIAGNOSTICS, shown if not OK]
	n=$((n + 1))
	if (($1)); then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		fail=1
		[[ -z ${3:-} ]] || echo "$3" | sed 's/^/# /'
	fi
}
