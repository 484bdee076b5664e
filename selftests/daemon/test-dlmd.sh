#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-dlmd.sh - dlmd without the kernel module: command line, memfile
# errors naming the line, and the fail-fast exit when the generic netlink
# family "dlm" does not exist.  TAP.
set -uo pipefail
# shellcheck source=selftests/daemon/lib.sh
. "$(dirname "$0")/lib.sh"

need "$bin/dlmd"
dlmd=$bin/dlmd
pre=()	# a command dlmd runs under (expect)
echo "TAP version 13"
echo "1..21"

# expect DESC STATUS PATTERN ARGS...: dlmd ARGS exits STATUS and its
# stderr (or stdout for status 0) matches the glob PATTERN.
expect() {
	local what=$1 want=$2 pat=$3 rc out
	shift 3
	"${pre[@]}" "$dlmd" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if ((want == 0)); then out=$(cat "$tmp/out"); else out=$(cat "$tmp/err"); fi
	# shellcheck disable=SC2053 # PAT is a glob on purpose
	if ((rc == want)) && [[ $out == $pat ]]; then
		ok "$what"
	else
		notok "$what (exit $rc)"
		diag "$tmp/err"
	fi
}

expect "--help describes dlmd and the memfile" 0 \
	"Usage: dlmd -f MEMFILE*Memfile (as in DLM-MPI*Exit status*" --help
expect "--version" 0 "dlmd 0.1.0 (generic netlink family dlm version 1*" --version
expect "no memfile: usage error" 2 "dlmd: no memfile: dlmd -f MEMFILE*"
expect "unknown option: usage error" 2 "*unrecognized option*--frobnicate*" \
	--frobnicate
expect "bad --stats-interval: usage error" 2 \
	"dlmd: --stats-interval 'soon': give whole seconds*" \
	-f /dev/null --stats-interval soon
expect "bad --log-level: usage error" 2 \
	"dlmd: --log-level 'loud': use debug, info, warn or error*" \
	-f /dev/null --log-level loud

printf '# compute node\n1024\n4096 127.0.0.1:9\n2048 127.0.0.1\n' >"$tmp/bad.mf"
expect "memfile with a bad line: exit 1 naming file and line" 1 \
	"dlmd: memfile $tmp/bad.mf:4: address '127.0.0.1': missing :PORT*" \
	-f "$tmp/bad.mf"
expect "bad --mpi-protocol: usage error" 2 \
	"dlmd: --mpi-protocol 'fast': use auto, as1, as2 or cs*" \
	--mpi-protocol fast -f x
expect "bad --mpi-thread-level: usage error" 2 \
	"dlmd: --mpi-thread-level 'many': use single, funneled*" \
	--mpi-thread-level many -f x
expect "bad --mpi-server-wait: usage error" 2 \
	"dlmd: --mpi-server-wait 'spin': use auto, poll or sleep*" \
	--mpi-server-wait spin -f x
expect "--mpi-* without mpirun: usage error naming mpirun" 2 \
	"dlmd: --mpi-* options need an MPI launch: mpirun -np N dlmd*" \
	--mpi-protocol as2 -f x
expect "bad --sched: usage error" 2 \
	"dlmd: --sched 'fifo': use batch, normal or idle*" --sched fifo -f x
expect "bad --cpu: usage error" 2 \
	"dlmd: --cpu '-1': use auto, none or a CPU number*" --cpu -1 -f x
# A CPU outside the affinity dlmd inherits: refused before the memfile.
pre=(taskset -c 0)
expect "--cpu outside the inherited CPUs: usage error naming them" 2 \
	"dlmd: --cpu 1: not a CPU dlmd may run on (0): pick one of those, or --cpu none*" \
	--cpu 1 -f "$tmp/none.mf"
pre=()
expect "bad --transport: usage error" 2 \
	"dlmd: --transport 'rdma': use tcp or verbs*" --transport rdma -f x
rdma_devs=(/sys/class/infiniband/*)
if [[ -e ${rdma_devs[0]} ]]; then
	skip "--transport verbs without an RDMA device: this machine has one"
elif [[ $("$dlmd" --version) != *"transports: tcp verbs"* ]]; then
	expect "--transport verbs when built without rdma-core names the packages" 1 \
		"dlmd: --transport verbs: this dlmd was built without rdma-core*libibverbs-dev*" \
		--transport verbs -f "$tmp/bad.mf"
else
	expect "--transport verbs without an RDMA device: exit 1 naming rdma_rxe" 1 \
		"dlmd: --transport verbs: no RDMA device*modprobe rdma_rxe*" \
		--transport verbs -f "$tmp/bad.mf"
fi
expect "missing memfile: exit 1 naming it" 1 \
	"dlmd: memfile $tmp/none.mf: No such file or directory*" -f "$tmp/none.mf"

printf '64\n16 127.0.0.1:9\n' >"$tmp/good.mf"
if [[ -d /sys/module/dlmem ]]; then
	skip "no module: dlmem is loaded here"
	skip "fails fast without the module: dlmem is loaded here"
else
	start=$(date +%s%N)
	expect "no module: exit 1 with the message that names the fix" 1 \
		"dlmd: generic netlink family dlm not found: load the module (modprobe dlmem)" \
		-f "$tmp/good.mf"
	ms=$((($(date +%s%N) - start) / 1000000))
	if ((ms < 2000)); then
		ok "fails fast without the module (${ms} ms, no server contacted)"
	else
		notok "fails fast without the module (${ms} ms)"
	fi
fi

# Under mpirun, with no module: rank 0 fails as above, tells the server
# ranks BYE, and the whole job ends (no rank left waiting).
printf '64\n16\n' >"$tmp/mpi.mf"
for m in openmpi mpich; do
	if [[ -d /sys/module/dlmem ]]; then
		skip "$m job without the module: dlmem is loaded here"
		continue
	fi
	if [[ ! -x $bin/dlmd-$m ]] || ! command -v "mpirun.$m" >/dev/null; then
		skip "$m job without the module: no dlmd-$m or mpirun.$m"
		continue
	fi
	launch=("mpirun.$m")
	[[ $m == openmpi ]] && launch+=(--allow-run-as-root --oversubscribe)
	timeout 120 "${launch[@]}" -np 2 "$dlmd" -f "$tmp/mpi.mf" \
		>"$tmp/mpi.out" 2>&1
	rc=$?
	if ((rc != 0 && rc != 124)) &&
	   grep -q "dlmd: generic netlink family dlm not found: load the module" "$tmp/mpi.out" &&
	   grep -q 'prog=dlmd-rank1 msg="memory server rank exits"' "$tmp/mpi.out"; then
		ok "$m: mpirun -np 2 dlmd without the module: fix named, server rank told to exit, job ends ($rc)"
	else
		notok "$m: mpirun -np 2 dlmd without the module (exit $rc)"
		diag "$tmp/mpi.out"
	fi
done
exit "$fail"
