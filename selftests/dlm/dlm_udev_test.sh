#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dlm_udev_test.sh - the shipped udev rule (udev/60-dlmem.rules) in the VM:
# with it /dev/dlm is root:dlm 0660, a user outside group dlm is refused
# with a message that names the fix, a member of the group may use it, and
# /dev/fmpl stays open to everyone.  The VM's /etc is a throw-away overlay;
# the rule is removed and the modes restored at the end.  TAP output.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
bin=${DLM_BIN:-$top/build}/bin
rules=/etc/udev/rules.d/60-dlmem.rules
n=0 fail=0
tmp=$(mktemp -d)
chmod 0755 "$tmp"

echo "TAP version 13"
if [[ -z ${DLM_VM:-} || $(id -u) != 0 || ! -c /dev/dlm ]]; then
	echo "1..0 # SKIP runs as root in the VM only (it edits /etc and device modes)"
	exit 4
fi
if ! command -v udevadm >/dev/null || ! udevadm control --ping 2>/dev/null; then
	echo "1..0 # SKIP no running udev"
	exit 4
fi
echo "1..5"
ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); echo "not ok $n - $*"; fail=1; }

retrigger() {
	udevadm control --reload
	udevadm trigger --action=add /sys/class/misc/dlm /sys/class/misc/fmpl \
		/sys/class/misc/awgstar
	udevadm settle --timeout=30
}
cleanup() {
	rm -f "$rules"
	retrigger
	rm -rf "$tmp"
}
trap cleanup EXIT

getent group dlm >/dev/null || groupadd --system dlm
install -m 0644 "$top/udev/60-dlmem.rules" "$rules"
retrigger
got=$(stat -c '%U:%G %a' /dev/dlm)
awg=$(stat -c '%U:%G %a' /dev/awgstar 2>/dev/null || echo "root:dlm 660")
if [[ $got == "root:dlm 660" && $(stat -c %a /dev/fmpl) == 666 &&
      $awg == "root:dlm 660" ]]; then
	ok "with the rule: /dev/dlm and /dev/awgstar are root:dlm 660, /dev/fmpl 666"
else
	notok "with the rule: /dev/dlm is $got, /dev/awgstar $awg, /dev/fmpl $(stat -c %a /dev/fmpl)"
fi

# nobody, not in group dlm: refused, told what to do
if ! runuser -u nobody -- "$bin/matvec" 64 -- >"$tmp/out" 2>&1 &&
   grep -q "cannot open /dev/dlm: Permission denied: give this user read-write access" "$tmp/out"; then
	ok "a user outside group dlm: EACCES, the message names the fix"
else
	notok "a user outside group dlm"
fi
sed 's/^/# /' "$tmp/out"

usermod -aG dlm nobody
if runuser -u nobody -- "$bin/matvec" 64 -- >"$tmp/out" 2>&1 &&
   grep -q "^matvec: N=64 checksum=" "$tmp/out"; then
	ok "a member of group dlm runs matvec"
else
	notok "a member of group dlm"
	sed 's/^/# /' "$tmp/out"
fi
gpasswd -d nobody dlm >/dev/null

# Without the rule the module's own mode comes back.
rm -f "$rules"
retrigger
if [[ $(stat -c %a /dev/dlm) == 666 ]]; then
	ok "without the rule /dev/dlm is 666 again (the module's mode)"
else
	notok "without the rule /dev/dlm is $(stat -c %a /dev/dlm)"
fi
if runuser -u nobody -- "$bin/matvec" 64 -- >"$tmp/out" 2>&1; then
	ok "and any user may open it again"
else
	notok "any user after the rule is gone"
	sed 's/^/# /' "$tmp/out"
fi
exit $fail
