#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# examples/systemd/kwitnessd.service: `systemd-analyze verify` accepts it
# without a warning (with ExecStart pointed at the built kwitnessd, since verify
# checks the binary exists), and it has what docs/kwitnessd.md promises:
# RuntimeDirectory= (kept across restarts) and StateDirectory= for the socket
# and the state folder, a capability bounding set, a writable cgroup fs for
# kills at close, no new privileges, and SIGTERM described as README does. (That the bounding set is enough,
# and that each BPF capability in it is needed, is
# tests/kernel/test_kwitnessd_caps.sh; that it kills a session's processes,
# tests/kernel/test_kwitnessd_unit.sh.)
. "$(dirname "$0")/../lib.sh"

UNIT=$KW_ROOT/examples/systemd/kwitnessd.service
T=$(mktemp -d /tmp/kwitness-unittest.XXXXXX)
trap 'rm -rf "$T"' EXIT

if command -v systemd-analyze >/dev/null; then
	sed "s|^ExecStart=/usr/local/sbin/kwitnessd|ExecStart=$KWD|" "$UNIT" >"$T/kwitnessd.service"
	out=$(systemd-analyze verify --man=no "$T/kwitnessd.service" 2>&1)
	rc=$?
	if [ $rc -eq 0 ] && [ -z "$out" ]; then
		ok "systemd-analyze verify: no error, no warning"
	else
		not_ok "systemd-analyze verify (exit $rc)"
		sed 's/^/#   /' <<<"$out" | head -10
	fi
	printf '[Service]\nExecStart=%s\nNoSuchSetting=1\n' "$KWD" >"$T/bad.service"
	check "... and it reports a unit it should (an unknown setting)" \
		grep -q "Unknown key" <<<"$(systemd-analyze verify --man=no "$T/bad.service" 2>&1)"
else
	skip "systemd-analyze is not installed (scripts/deps.sh installs systemd)"
	skip "systemd-analyze is not installed"
fi

key() { sed -n "s/^$1=//p" "$UNIT"; }
expect_eq "RuntimeDirectory= holds the socket's folder (/run/kwitness)" kwitness "$(key RuntimeDirectory)"
expect_eq "StateDirectory= holds records, logs, policies (/var/lib/kwitness)" kwitness "$(key StateDirectory)"
expect_eq "the capability bounding set is the documented five" \
	"CAP_BPF CAP_PERFMON CAP_NET_ADMIN CAP_CHOWN CAP_KILL" "$(key CapabilityBoundingSet)"
expect_eq "the runtime directory (the OCI hook's state) survives restarts" yes \
	"$(key RuntimeDirectoryPreserve)"
expect_eq "the cgroup fs is writable (freeze, cgroup.kill at close)" "no /sys/fs/bpf /sys/fs/cgroup" \
	"$(key ProtectControlGroups) $(key ReadWritePaths)"
# README and kwitnessd(8): SIGTERM stops the collector, not the sessions.
check "the unit's comments do not say SIGTERM closes sessions" \
	test -z "$(grep -i '^#.*SIGTERM closes' "$UNIT")"
check "... and say SIGTERM leaves them pinned, as README does" \
	grep -q '^# SIGTERM stops the collector, not the sessions' "$UNIT"
expect_eq "no new privileges" yes "$(key NoNewPrivileges)"
expect_eq "Type=simple with --foreground" "simple /usr/local/sbin/kwitnessd --foreground" \
	"$(key Type) $(key ExecStart)"
finish
