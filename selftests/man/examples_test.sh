#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# examples_test.sh - the example programs of the libraries' and devices'
# manual pages (Documentation/man/man3, man4) run, and print what their
# pages show.
# scripts/man-examples.sh takes each complete program out of its page as
# a reader sees it; it is built against build/lib and run the way its page
# says: the FMPL ones under fmplrun, the AWG-STAR ones on a ring of three
# boards (awg_boards=3, one awgstard per board), the libdlm ones in a local
# space or, given 6 GB of guest memory, against dlmd and two memory servers
# with the page's memfile.  Where a page shows the output, every line the
# program prints must be a line of the page.  Needs root, dlmem.ko, cc.
# TAP output.
set -uo pipefail
KSFT_SKIP=4
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
bin=${DLM_BIN:-$top/build}
man3=$top/Documentation/man/man3
man4=$top/Documentation/man/man4
tmp=$(mktemp -d)
n=0 fail=0 pids=()

echo "TAP version 13"
if [[ $(id -u) != 0 || ! -c /dev/dlm ]]; then
	echo "1..0 # SKIP needs root and dlmem.ko loaded"
	exit $KSFT_SKIP
fi
if ! command -v cc >/dev/null || ! command -v groff >/dev/null; then
	echo "1..0 # SKIP needs cc and groff"
	exit $KSFT_SKIP
fi
echo "1..20"

# shellcheck source=selftests/awgstar/lib.sh
source "$top/selftests/awgstar/lib.sh"
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait "${pids[@]}" 2>/dev/null
	awg_ring_stop >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT

# shellcheck source=selftests/man/lib.sh
source "$here/lib.sh"

# The programs, built as the pages say (cc prog.c -lLIB).
build() {
	local c lib
	while read -r c; do
		case ${c##*/} in
		fmpl* | libfmpl*) lib=fmpl ;;
		awg* | libawgstar*) lib=awgstar ;;
		*) lib=dlm ;;
		esac
		cc -std=gnu11 -O2 -I"$top/userlib/include" -I"$top/uapi" \
			-o "${c%.c}" "$c" -L"$bin/lib" -Wl,-rpath,"$bin/lib" \
			-l"$lib" -lm -pthread || return 1
	done < <("$top/scripts/man-examples.sh" "$tmp/ex" "$man3"/*.3 "$man4"/*.4)
}

# run EXAMPLE SHOWN DESCRIPTION CMD...: CMD (its output in $tmp/EXAMPLE.out)
# must exit 0 and print something; with SHOWN=1 every line it prints must
# be a line of the page EXAMPLE's name comes from.
run() {
	local ex=$1 shown=$2 what=$3 page out=$tmp/$1.out rc line miss=""
	shift 3
	page=$man3/${ex%-*}.3
	[[ -f $page ]] || page=$man4/${ex%-*}.4
	timeout 120 "$@" >"$out" 2>"$tmp/$ex.err"
	rc=$?
	if ((rc != 0)); then
		result 0 "$what" "exit status $rc; $(cat "$out" "$tmp/$ex.err")"
		return
	fi
	if [[ ! -s $out ]]; then
		result 0 "$what" "it printed nothing"
		return
	fi
	if ((shown)); then
		MANWIDTH=250 man -l "$page" 2>/dev/null | sed -E 's/^ +//; s/ +$//' \
			>"$tmp/page.txt"
		while IFS= read -r line; do
			grep -qxF -- "$line" "$tmp/page.txt" || miss+="$line"$'\n'
		done <"$out"
	fi
	if [[ -z $miss ]]; then
		result 1 "$what"
	else
		result 0 "$what" "printed, not shown on ${page##*/}: $miss"
	fi
}

if ! build 2>"$tmp/build.err"; then
	result 0 "the pages' example programs build" "$(cat "$tmp/build.err")"
	exit 1
fi
result 1 "the pages' example programs build: $(find "$tmp/ex" -name '*.c' | wc -l)"
ex=$tmp/ex

# ---- libfmpl -------------------------------------------------------------
run libfmpl-1 1 "libfmpl(3): ping-pong and allreduce of 3 ranks print what the page shows" \
	"$bin/bin/fmplrun" -np 3 "$ex/libfmpl-1"
run fmpl_barrier-1 1 "fmpl_barrier(3): the collectives of 4 ranks print what the page shows" \
	sh -c "'$bin/bin/fmplrun' -np 4 '$ex/fmpl_barrier-1' | sort"
run fmpl_sendbuf_set-1 1 "fmpl_sendbuf_set(3): 3 sends into the spool before any receive" \
	"$bin/bin/fmplrun" -np 2 "$ex/fmpl_sendbuf_set-1"
# fmpl_init's example prints nothing: its exit status is the check
timeout 60 "$bin/bin/fmplrun" -np 4 "$ex/fmpl_init-1" >"$tmp/init.out" 2>&1
result $((! $?)) "fmpl_init(3): areas of the program's own, 4 ranks" "$(cat "$tmp/init.out")"

# ---- libawgstar: a ring of three boards ----------------------------------
if awg_reload 3 && awg_ring_start 3 tcp >"$tmp/ring.log" 2>&1; then
	# awg_open's count, first: the page shows a board nobody wrote to
	run awg_open-1 1 "awg_open(3): a fresh board of 64 MiB is all zeros" \
		env AWG_DEVICE=/dev/awgstar1 "$ex/awg_open-1"
	AWG_DEVICE=/dev/awgstar9 "$ex/awg_open-1" >"$tmp/o9.out" 2>&1
	rc=$?
	result $((rc == 1 && $(grep -cxF 'awg_open: No such file or directory' "$tmp/o9.out") == 1)) \
		"awg_open(3): a board that does not exist: the page's message, status 1" \
		"status $rc: $(cat "$tmp/o9.out")"
	for e in libawgstar-1:1 awg_barrier-1:0 awg_peek8-1:0 awg_read-1:0 awg_send_event-1:0; do
		p=${e%:*}
		for i in 0 1 2; do
			AWG_DEVICE=$(awg_dev "$i") timeout 60 "$ex/$p" \
				>"$tmp/$p.$i" 2>&1 &
			w[i]=$!
		done
		rcs=
		for i in 0 1 2; do wait "${w[i]}"; rcs+=" $?"; done
		cat "$tmp/$p".[012] >"$tmp/$p.all"
		run "$p" "${e#*:}" "${p%-*}(3): its program on the three nodes at once (status$rcs)" \
			sh -c "[ '$rcs' = ' 0 0 0' ] && cat '$tmp/$p.all'"
	done
	run awg_get_info-1 0 "awg_get_info(3): node, ring and counters of board 1" \
		env AWG_DEVICE=/dev/awgstar1 "$ex/awg_get_info-1"
	awg_ring_stop >/dev/null 2>&1
else
	for i in $(seq 8); do result 0 "the AWG-STAR ring of three boards formed" "$(cat "$tmp/ring.log")"; done
fi
# back to the module as run-in-vm.sh loaded it
rmmod dlmem && insmod "${DLM_KO:-$top/kmod/dlmem.ko}"

# ---- the devices' pages: raw ioctls ----------------------------------------
run dlmem-1 1 "dlmem(4): a local space through the raw ioctls" "$ex/dlmem-1"
# the world's key is the pid: the page shows one as 0x2f1b
run fmpl-1 1 "fmpl(4): the handshake, the limits, a world of one" \
	sh -c "'$ex/fmpl-1' | sed 's/world 0x[0-9a-f]*/world 0x2f1b/'"
run awgstar-1 1 "awgstar(4): a board alone: ioctl and pwrite, read back" \
	"$ex/awgstar-1" /dev/awgstar

# ---- libdlm ---------------------------------------------------------------
run dlm_stats-1 0 "dlm_stats(3): the counters of a fresh local space" "$ex/dlm_stats-1"
DLM_MEMFILE=$tmp/none "$ex/dlm_last_error-1" >"$tmp/le.out" 2>&1
rc=$?
result $((rc == 1 && $(grep -c '^errno 2: file not found' "$tmp/le.out") == 1)) \
	"dlm_last_error(3): a missing memfile: errno and both messages, status 1" \
	"status $rc: $(cat "$tmp/le.out")"
# The 4 GB and 2 GB examples of dlm_startup(3) and dlm_alloc(3), with the
# pages' memfiles, need the servers' memory in this guest.
if (($(awk '/^MemTotal/ { print $2 }' /proc/meminfo) < 5800000)); then
	echo "ok $((n + 1)) # SKIP dlm_startup(3): 4 GB on two servers needs a guest of 6 GB (vm-run --mem 6G)"
	echo "ok $((n + 2)) # SKIP dlm_alloc(3): a 2 GB matrix on two servers needs a guest of 6 GB (vm-run --mem 6G)"
	exit $fail
fi
for port in 7100 7101; do
	"$bin/bin/dlm-memserver" --listen 127.0.0.1:$port --size 2048 \
		>"$tmp/ms$port.log" 2>&1 &
	pids+=($!)
done
printf '512\n2048 127.0.0.1:7100\n2048 127.0.0.1:7101\n' >"$tmp/memfile"
printf '256\n1024 127.0.0.1:7100\n1024 127.0.0.1:7101\n' >"$tmp/memfile2"
sleep 1
"$bin/bin/dlmd" -f "$tmp/memfile" >"$tmp/dlmd.log" 2>&1 &
pids+=($!)
for ((t = 0; t < 100; t++)); do
	grep -q 'msg="registered"' "$tmp/dlmd.log" && break
	sleep 0.1
done
run dlm_startup-1 1 "dlm_startup(3): 4 GB written and read back with 512 MB local" \
	"$ex/dlm_startup-1" x y -- -f "$tmp/memfile"
run dlm_alloc-1 1 "dlm_alloc(3): the paper's matvec over 2 GB, the page's y[N - 1]" \
	"$ex/dlm_alloc-1" -- -f "$tmp/memfile2"
exit $fail
