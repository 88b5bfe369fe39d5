#!/usr/bin/env bash
# The kernel side through the hooks API, no daemon: real cgroups, real
# syscalls, the ring buffer's events and the session counters
# (tests/helpers/kw-hooktest.c). Needs root and a cgroup2 mount.
. "$(dirname "$0")/../lib.sh"

HT=$KW_BUILD/tests/kw-hooktest
if [ "$(id -u)" -ne 0 ]; then
	skip "hooks direct: not root"
	finish
fi
if ! grep -q ' - cgroup2 ' /proc/self/mountinfo; then
	skip "hooks direct: no cgroup2 mount"
	finish
fi
if [ ! -x "$HT" ]; then
	not_ok "hooks direct: $HT not built"
	finish
fi

out=$("$HT" 2>/tmp/kw-hooktest.$$.err); rc=$?
n=0
while IFS= read -r line; do
	case "$line" in
	"ok - "*) ok "${line#ok - }"; n=$((n + 1)) ;;
	"not ok - "*) not_ok "${line#not ok - }"; n=$((n + 1)) ;;
	"skip - "*) skip "${line#skip - }"; n=$((n + 1)) ;;
	esac
done <<<"$out"
if [ $rc -ne 0 ] || [ $n -eq 0 ]; then
	[ $rc -ne 0 ] && sed 's/^/#   /' /tmp/kw-hooktest.$$.err | grep -v '^#   libbpf: *[0-9]*:' | tail -20
	[ $n -eq 0 ] && not_ok "hooks direct: kw-hooktest printed no result (exit $rc)"
	[ $rc -ne 0 ] && [ $n -gt 0 ] && echo "# kw-hooktest exited $rc"
fi
rm -f /tmp/kw-hooktest.$$.err
finish
