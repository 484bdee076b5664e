# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034 # $tmp, $fake, $n, $fail are the sourcing test's
#
# lib.sh - helpers of the libdlm test scripts that run matvec-like
# programs against selftests/remote/fake_dlmd.py (sourced).  The sourcing
# script sets tmp (a scratch directory), fake (the path of fake_dlmd.py),
# n=0, fail=0 and daemon=.

ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); echo "not ok $n - $*"; fail=1; }
show() { sed 's/^/# /' "$@"; }

stop_daemon() {
	if [[ -n $daemon ]]; then
		kill "$daemon" 2>/dev/null
		wait "$daemon" 2>/dev/null
		daemon=
	fi
}

# start_daemon POOL_MB: fake_dlmd.py registered with a frame pool of
# POOL_MB; 1 (its stderr shown) if it did not register within a minute
# (Python starts slowly under emulation).
start_daemon() {
	rm -f "$tmp/ready"
	python3 -S "$fake" --pool-mb "$1" --ready-file "$tmp/ready" \
		2>"$tmp/daemon.err" &
	daemon=$!
	for _ in $(seq 600); do
		[[ -s $tmp/ready ]] && return 0
		kill -0 "$daemon" 2>/dev/null || break
		sleep 0.1
	done
	show "$tmp/daemon.err"
	return 1
}

# want N: the line matvec prints for order N, with the exact checksum:
# y[i] = i * N(N-1)/2, all sums exact in doubles.
want() { echo "matvec: N=$1 checksum=$(( ($1 * ($1 - 1) / 2) ** 2 ))"; }
