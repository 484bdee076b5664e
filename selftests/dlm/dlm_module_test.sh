#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dlm_module_test.sh - load, unload and module parameters of dlmem.ko.
# Needs root and DLM_KO (path of dlmem.ko); DLM_BIN (directory of the
# built selftests and dlmctl).  Leaves the module loaded as it found it.
set -uo pipefail
KSFT_SKIP=4
: "${DLM_KO:?set DLM_KO to the path of dlmem.ko}"
: "${DLM_BIN:?set DLM_BIN to the build directory}"
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); echo "not ok $n - $*"; fail=1; }
check() { local d=$1; shift; if "$@"; then ok "$d"; else notok "$d"; fi; }
loaded() { [[ -d /sys/module/dlmem ]]; }

echo "TAP version 13"
if [[ $(id -u) != 0 ]]; then
	echo "1..0 # SKIP needs root to load modules"
	exit $KSFT_SKIP
fi
echo "1..10"
was_loaded=0
loaded && was_loaded=1
loaded || insmod "$DLM_KO"

tmp=$(mktemp -d)
hold_pid=
cleanup() {
	[[ -n $hold_pid ]] && kill "$hold_pid" 2>/dev/null
	exec 3>&- 2>/dev/null
	rm -rf "$tmp"
	if ((was_loaded)) && ! loaded; then insmod "$DLM_KO"; fi
	if ((!was_loaded)) && loaded; then rmmod dlmem; fi
}
trap cleanup EXIT

check "module loaded and /dev/dlm present" test -c /dev/dlm

# A live mapping pins the module.
mkfifo "$tmp/in"
"$DLM_BIN/selftests/dlm/dlm_hold" <"$tmp/in" >"$tmp/out" &
hold_pid=$!
exec 3>"$tmp/in"
for _ in $(seq 100); do grep -q ready "$tmp/out" && break; sleep 0.1; done
check "a process maps a space" grep -q ready "$tmp/out"
check "rmmod refused while a mapping is alive" \
	bash -c '! rmmod dlmem 2>/dev/null'
check "module still loaded" loaded
echo go >&3
exec 3>&-
wait "$hold_pid"
rc=$?
hold_pid=
check "the mapping's data survived the rmmod attempt (status $rc)" \
	test "$rc" = 0
check "rmmod succeeds once the mapping is gone" rmmod dlmem
check "/dev/dlm removed" test ! -e /dev/dlm

check "reload works" insmod "$DLM_KO"
check "default_page_kb=64 reported by DLM_IOC_GET_INFO" bash -c "
	rmmod dlmem && insmod '$DLM_KO' default_page_kb=64 &&
	'$DLM_BIN/bin/dlmctl' --json info | grep -c >/dev/null '\"page_size_default\": 65536'"
rmmod dlmem
check "bad parameters refused (default_page_kb=6, max_local_mb too big, request_timeout_ms=0)" \
	bash -c "! insmod '$DLM_KO' default_page_kb=6 2>/dev/null &&
		 ! insmod '$DLM_KO' max_local_mb=999999999 2>/dev/null &&
		 ! insmod '$DLM_KO' request_timeout_ms=0 2>/dev/null &&
		 insmod '$DLM_KO'"
# At run time too: a 0 would make every wait time out at once.
t=/sys/module/dlmem/parameters/request_timeout_ms
check "request_timeout_ms: 0 and garbage refused through sysfs, 1 taken" \
	bash -c "old=\$(cat $t) &&
		 ! echo 0 2>/dev/null >$t && ! echo x 2>/dev/null >$t &&
		 test \$(cat $t) = \$old && echo 1 >$t && test \$(cat $t) = 1 &&
		 echo \$old >$t && test \$(cat $t) = \$old"
exit $fail
