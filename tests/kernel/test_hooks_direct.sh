#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
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
cg2=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
if [ ! -x "$HT" ]; then
	not_ok "hooks direct: $HT not built"
	finish
fi

# cgroup_track.bpf.h follows only hierarchy_id 0, the cgroup2 hierarchy: every
# controller mounted as cgroup v1 must sit on a hierarchy id >= 1 (/proc/cgroups)
v1_ctrls=$(awk '{ for (i = 1; i < NF; i++) if ($i == "-" && $(i + 1) == "cgroup") print $NF }' \
	/proc/self/mountinfo | tr ',' '\n' | grep -vE '^(rw|ro|relatime|name=.*)$' | sort -u)
if [ -z "$v1_ctrls" ]; then
	echo "# no cgroup v1 controllers mounted: none can share hierarchy 0"
else
	bad=
	for c in $v1_ctrls; do
		id=$(awk -v c="$c" '$1 == c { print $2 }' /proc/cgroups)
		[ -n "$id" ] && [ "$id" -eq 0 ] && bad="$bad $c"
	done
	expect_eq "hooks direct: v1 controllers ($(echo $v1_ctrls | wc -w)) are on hierarchy ids >= 1" "" "$bad"
fi

err=$(mktemp /tmp/kw-hooktest.XXXXXX)
out_f=$(mktemp /tmp/kw-hooktest.XXXXXX)
ht_pid=
# What kw-hooktest leaves when it is killed: its pins and its cgroups,
# named after its pid.
ht_cleanup() {
	set +e
	if [ -n "$ht_pid" ]; then
		kill -KILL "$ht_pid" 2>/dev/null
		rm -rf "/sys/fs/bpf/kwhooktest-$ht_pid"
		for d in "$cg2"/kwhooktest-"$ht_pid"-*; do
			rm_cgroup "$d"
		done
	fi
	rm -f "$err" "$out_f"
}
trap ht_cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
"$HT" >"$out_f" 2>"$err" &
ht_pid=$!
wait "$ht_pid"; rc=$?
out=$(cat "$out_f")
n=0
while IFS= read -r line; do
	case "$line" in
	"ok - "*) ok "${line#ok - }"; n=$((n + 1)) ;;
	"not ok - "*) not_ok "${line#not ok - }"; n=$((n + 1)) ;;
	"skip - "*) skip "${line#skip - }"; n=$((n + 1)) ;;
	esac
done <<<"$out"
# A crash or a failing exit after some "ok" lines is a failure of its own.
if [ $rc -ne 0 ]; then
	sed 's/^/#   /' "$err" | grep -v '^#   libbpf: *[0-9]*:' | tail -20
	if [ $rc -gt 128 ]; then
		not_ok "hooks direct: kw-hooktest killed by signal $((rc - 128)) after $n results"
	else
		not_ok "hooks direct: kw-hooktest exited $rc after $n results"
	fi
fi
[ $n -gt 0 ] || not_ok "hooks direct: kw-hooktest printed no result (exit $rc)"
finish
