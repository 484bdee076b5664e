#!/bin/bash
# guest-run.sh - guest side of vm-run; runs INSIDE the VM as root.
#
# Usage (done by vm-run, not by hand): guest-run.sh OUT REPO
#
# Reads the command from OUT/cmd.args (NUL-separated argv, written by
# vm-run) and its PATH (the host's, python3 first: see vm-run --help) from
# OUT/host-path, then:
#   OUT/uname-r      uname -r of the guest kernel
#   OUT/guest.log    the command's stdout+stderr (also on our stdout)
#   OUT/exit-status  the command's exit status
#   OUT/dmesg.txt    dmesg after the command
# and exits with the command's status.  The command runs with cwd REPO,
# stdin /dev/null, DLM_VM=1 and DLM_VM_OUT=OUT in its environment.
set -uo pipefail

if [ $# -ne 2 ]; then
	echo "guest-run.sh: usage: guest-run.sh OUT REPO (called by vm-run)" >&2
	exit 125
fi
out=$1
repo=$2

uname -r >"$out/uname-r"

if [ -s "$out/host-path" ]; then
	PATH=$(cat "$out/host-path")
	export PATH
fi
export DLM_VM=1
export DLM_VM_OUT="$out"

cmd=()
mapfile -d '' -t cmd <"$out/cmd.args"

if [ ${#cmd[@]} -eq 0 ]; then
	echo "guest-run.sh: no command in $out/cmd.args" >&2
	status=125
elif ! cd "$repo"; then
	status=125
else
	"${cmd[@]}" </dev/null 2>&1 | tee "$out/guest.log"
	status=${PIPESTATUS[0]}
fi

echo "$status" >"$out/exit-status.tmp" && mv -f "$out/exit-status.tmp" "$out/exit-status"

if ! dmesg >"$out/dmesg.txt.tmp" 2>"$out/dmesg.err"; then
	echo "guest-run.sh: dmesg failed: $(cat "$out/dmesg.err")" >&2
fi
mv -f "$out/dmesg.txt.tmp" "$out/dmesg.txt"
rm -f "$out/dmesg.err"
sync

exit "$status"
