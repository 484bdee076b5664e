# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# shellcheck disable=SC2154 # $tmp, $job, $bin, $srvmb, $pin, $top: the sourcing script's
#
# lib.sh - helpers shared by the benchmark scripts (sourced).  For those
# that start dlmd: its log is $tmp/dlmd.log; $job is the dlmd (or mpirun)
# started in the background; $bin is the build directory.  Every sourcing
# script defines say(), which prints progress.

# stop_servers: dlmd, then every process in $pids, which is emptied.
stop_servers() {
	stop_dlmd
	if ((${#pids[@]})); then
		kill "${pids[@]}" 2>/dev/null || true
		wait "${pids[@]}" 2>/dev/null || true
	fi
	pids=()
}

# stop_all: stop_servers, every other child awaited, $tmp removed (an EXIT
# trap).
stop_all() {
	stop_servers
	wait 2>/dev/null || true
	rm -rf "$tmp"
}

# himeno_ref LINE: hmb (the data's MB) and hgosa (the residual every other
# run must reproduce) from the output LINE of an all-local Himeno run;
# status 1 if LINE has no residual.
himeno_ref() {
	hmb=$(sed -n 's/.*data_mb=\([0-9.]*\).*/\1/p' <<<"$1")
	hgosa=$(sed -n 's/.*gosa=\([^ ]*\).*/\1/p' <<<"$1")
	[[ -n $hgosa ]]
}

# mb_of PCT: PCT% of the Himeno data ($hmb), rounded up to whole MB.
# (Rounded down, 100% would be a DLM page short of the data, and a cyclic
# sweep would then fetch every page again.)
mb_of() {
	awk -v m="$hmb" -v p="$1" 'BEGIN { v = m * p / 100; print v == int(v) ? v : int(v) + 1 }'
}

# himeno_budget_ok PCT...: exit 2, naming the fix, unless PCT% of the
# Himeno data ($hmb) holds at least 20 DLM pages of $hpage KB.  Every grid
# point touches 16 places far apart (14 arrays, three planes of p): with
# fewer pages than that every point faults and a run takes hours (1 MB
# pages and 15 of them did not finish a sweep of a 29 MB grid in two
# minutes; 18 pages of 384 KB at 7% took 1.4x the time of 56 of 128 KB).
himeno_budget_ok() {
	local p m n
	if [[ ! $hpage =~ ^[1-9][0-9]*$ ]] || ((hpage % 4)); then
		say "HIMENO_PAGE_KB '$hpage': give a positive multiple of 4"
		exit 2
	fi
	for p in "$@"; do
		((p < 100)) || continue
		m=$(mb_of "$p")
		n=$((m * 1024 / hpage))
		((n >= 20)) && continue
		say "Himeno at $p% local: $m MB is $n DLM pages of $hpage KB, fewer than the 20 its stencil needs: set HIMENO_PAGE_KB to $((m * 1024 / 20 / 4 * 4)) or less, or raise the ratio"
		exit 2
	done
}

# check_args: exit 2 unless ARRAY_MB ($mb) and ITERATIONS ($iters) are
# positive whole numbers and every PERCENT (pcts) one from 1 to 100.
check_args() {
	local p
	[[ $mb =~ ^[1-9][0-9]*$ && $iters =~ ^[1-9][0-9]*$ ]] || {
		say "ARRAY_MB and ITERATIONS must be positive whole numbers, not '$mb' and '$iters'"
		exit 2
	}
	for p in "${pcts[@]}"; do
		[[ $p =~ ^([1-9][0-9]?|100)$ ]] && continue
		say "PERCENT '$p': give a whole number from 1 to 100"
		exit 2
	done
}

# ko_fits KO [RELEASE]: 0 if KO is a dlmem.ko built for kernel RELEASE
# (default: the running one); else 1, saying which make command builds one.
ko_fits() {
	local ko=$1 rel=${2:-$(uname -r)} vm
	vm=$(PATH=$PATH:/usr/sbin:/sbin modinfo -F vermagic "$ko" 2>/dev/null)
	if [[ -z $vm ]]; then
		say "no dlmem.ko at $ko: run make (the make bench targets build it)"
		return 1
	fi
	vm=${vm%% *}
	[[ $vm == "$rel" ]] && return 0
	say "$ko is built for kernel $vm, not $rel: run the make target with VM_KERNEL=$rel (it builds the module for that kernel) or point DLM_KO at a dlmem.ko built for $rel"
	return 1
}

# load_dlmem [PARAM=VALUE...]: dlmem.ko ($DLM_KO, default kmod/dlmem.ko)
# loaded with the PARAMs unless it already is; status 2 if the module is
# not built for this kernel, else insmod's.
load_dlmem() {
	local ko=${DLM_KO:-$top/kmod/dlmem.ko}
	[[ -d /sys/module/dlmem ]] && return 0
	ko_fits "$ko" || return 2
	insmod "$ko" "$@"
}

# need_root: exit 2, saying how to run it in the VM, unless root.
need_root() {
	[[ $(id -u) == 0 ]] && return 0
	say "run as root in the VM: vm-images/vm-run -- $0"
	exit 2
}

# mpi_launch TR [N]: LAUNCH = mpirun of TR (openmpi, mpich) for N ranks
# (default 3) with what it needs in the VM (Open MPI: more ranks than
# vCPUs, no binding).
mpi_launch() {
	LAUNCH=("mpirun.$1" -np "${2:-3}")
	if [[ $1 == openmpi ]]; then
		LAUNCH+=(--oversubscribe --bind-to none)
	fi
}

# wait_registered TR: 0 once dlmd logged that it registered; 1, with the
# log's end shown and $job cleared, if $job ended first or did not
# register within $per_run_timeout seconds (then it is stopped).
wait_registered() {
	local t0=$SECONDS

	until grep -q 'msg="registered"' "$tmp/dlmd.log" 2>/dev/null; do
		if ! kill -0 "$job" 2>/dev/null; then
			say "$1: dlmd did not start:"
		elif ((SECONDS - t0 >= per_run_timeout)); then
			say "$1: dlmd did not register within $per_run_timeout s (RUN_TIMEOUT); stopping it:"
			stop_dlmd
		else
			sleep 0.2
			continue
		fi
		tail -5 "$tmp/dlmd.log" >&2
		job=
		return 1
	done
}

# stop_dlmd: SIGTERM to the dlmd that logged its pid; wait up to 60 s for
# $job, then kill it.
stop_dlmd() {
	local d
	d=$(sed -n 's/.*prog=dlmd msg="starting".* pid=\([0-9]*\).*/\1/p' \
		"$tmp/dlmd.log" 2>/dev/null) || true	# no log: never started
	if [[ -n $d ]]; then
		kill -TERM "$d" 2>/dev/null || true
	fi
	if [[ -n $job ]]; then
		timeout 60 tail --pid="$job" -f /dev/null || kill -KILL "$job"
		wait "$job" 2>/dev/null || true
	fi
	job=
}

# start_dlmd TRANSPORT [DLMD-ARGS...]: dlmd for TRANSPORT (tcp, openmpi,
# mpich) with its stats in $tmp/stats.json, under ${pin[@]} (a taskset,
# or empty); for tcp the first call also starts two memory servers of
# $srvmb MB (into $pids), which later calls reuse.
start_dlmd() {
	local tr=$1
	shift
	rm -f "$tmp/stats.json" "$tmp/dlmd.log"
	case $tr in
	tcp)
		if [[ ! -s $tmp/tcp.mem ]]; then
			for port in 7301 7302; do
				"$bin/bin/dlm-memserver" --listen 127.0.0.1:$port \
					--size "$srvmb" --log-level warn &
				pids+=($!)
			done
			printf '%s\n%s 127.0.0.1:7301\n%s 127.0.0.1:7302\n' \
				"$srvmb" "$srvmb" "$srvmb" >"$tmp/tcp.mem"
			sleep 1
		fi
		"${pin[@]}" "$bin/bin/dlmd" -f "$tmp/tcp.mem" \
			--stats-file "$tmp/stats.json" --stats-interval 0 "$@" \
			2>"$tmp/dlmd.log" &
		;;
	openmpi|mpich)
		printf '%s\n%s\n%s\n' "$srvmb" "$srvmb" "$srvmb" >"$tmp/mpi.mem"
		mpi_launch "$tr"
		"${pin[@]}" "${LAUNCH[@]}" "$bin/bin/dlmd" -f "$tmp/mpi.mem" \
			--stats-file "$tmp/stats.json" --stats-interval 0 "$@" \
			>"$tmp/dlmd.log" 2>&1 &
		;;
	esac
	job=$!
	wait_registered "$tr" || return 1
	grep -o 'protocol=[a-z0-9]*' "$tmp/dlmd.log" | head -1 >&2 || true
}

# report SCRIPT ARGS...: run the report selftests/bench/SCRIPT with ARGS,
# under Debian's python3 if there is one (the one with matplotlib).
# matplotlib's config and font cache go in build/mplconfig: in a VM guest
# the home directory is not writable, so matplotlib would make a
# temporary one and rebuild its font cache in every run, with two
# warnings on stderr.  An MPLCONFIGDIR already set is kept; one that
# cannot be created is left to matplotlib.
report() {
	local py=python3 cfg=${MPLCONFIGDIR:-$top/build/mplconfig}

	[[ -x /usr/bin/python3 ]] && py=/usr/bin/python3
	if mkdir -p -- "$cfg" 2>/dev/null && [[ -w $cfg ]]; then
		MPLCONFIGDIR=$cfg "$py" "$top/selftests/bench/$1" "${@:2}"
	else
		"$py" "$top/selftests/bench/$1" "${@:2}"
	fi
}
