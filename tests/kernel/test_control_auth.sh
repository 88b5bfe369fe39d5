#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Authorization on the control socket, with a real non-root user made for the
# run (useradd, removed after): it sees and closes only its own sessions, opens
# one only on a cgroup it owns or was delegated (directory and cgroup.procs) or
# that kwitnessd.conf grants it; a symlinked cgroup path is refused; a process
# inside a session, root or not, is refused (forbidden_from_session).
# Also after a crash: resumed sessions keep their owners.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kwd_lib.sh"

kwd_require

# A user and a group of our own: unique per run, removed at exit.
kt_user_add kwt

# The user must reach the socket in our private folder (the socket itself is
# 0660, group $KT_GROUP); the key stays 0600.
chmod 711 "$KT_TMP"
mkdir -p "$KT_CG/granted"
printf 'group = %s\ngrant = %s %s\n' "$KT_GROUP" "$KT_USER" "$KT_CG/granted" >"$KT_TMP/kwitnessd.conf"
# Pinned (a folder of our own) so that sessions outlive a crash, and their
# owners with them.
KT_PIN=/sys/fs/bpf/kwta-$$ KT_SOCK=$KT_TMP/kwitnessd.sock
start_kwd() {
	"$KWD" --foreground -v --state-dir "$KT_TMP/state" --socket "$KT_SOCK" \
		--key "$KT_TMP/key.pem" --pin-dir "$KT_PIN" --config "$KT_TMP/kwitnessd.conf" \
		2>>"$KT_TMP/kwitnessd.log" &
	KT_DPID=$!
	for _ in $(seq 200); do
		"$KW" session list --socket "$KT_SOCK" >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	return 1
}
if ! start_kwd; then
	sed 's/^/# /' "$KT_TMP/kwitnessd.log" | tail -5
	kt_fail_all "kwitnessd did not start"
fi

POL=$(policy_file p '{"kwitness_policy":1,"mode":"enforce","record":"all","on_record_failure":"deny","net":{"connect":[]}}')
chmod 644 "$POL"

SETPRIV=$(command -v setpriv) || kt_skip_all "setpriv missing"
as_user() { "$SETPRIV" --reuid="$U" --regid="$G" --init-groups "$@"; }
# user_ctl ARGS...: kwitness as the user; prints stdout, then the error code
# ("ok" when it succeeded).
user_ctl() {
	local out err rc
	out=$(as_user "$KW" "$@" --socket "$KT_SOCK" 2>"$KT_TMP/err")
	rc=$?
	err=$(sed -n 's/^kwitness [a-z ]*: \([a-z_]*\): .*/\1/p' "$KT_TMP/err" | head -1)
	printf '%s\n' "$out"
	if [ $rc -eq 0 ]; then echo ok; else echo "${err:-rc$rc}"; fi
}
user_open() { # CGROUP
	user_ctl session open --cgroup "$1" --policy "$POL" \
		--sandbox-id "spiffe://test.kwitness.local/u/$$" --image-digest "$DIGEST"
}

# root's session
rootcg=$(cg_make rootcg)
rsid=$(session_open "$rootcg" "$POL")
[ -n "$rsid" ] || kt_fail_all "root could not open a session"

out=$(user_ctl session list)
expect_eq "user: list succeeds" ok "$(tail -1 <<<"$out")"
expect_eq "user: root's session not listed" 0 "$(grep -c "$rsid" <<<"$out")"
out=$(user_ctl status --json)
expect_eq "user: status does not show root's session" 0 "$(grep -c "$rsid" <<<"$out")"
out=$(user_ctl session close "$rsid")
expect_eq "user: closing root's session refused" forbidden_session "$(tail -1 <<<"$out")"
expect_eq "root: its session is still open" 1 \
	"$("$KW" session list --socket "$KT_SOCK" | grep -c "$rsid")"

other=$(cg_make other)
expect_eq "user: open on a root-owned cgroup refused" forbidden_cgroup \
	"$(user_open "$other" | tail -1)"
half=$(cg_make half)
chown "$U" "$half"
expect_eq "user: open on a cgroup whose cgroup.procs is not its own refused" forbidden_cgroup \
	"$(user_open "$half" | tail -1)"
expect_eq "user: open on a cgroup inside root's session refused" forbidden_cgroup \
	"$(user_open "$rootcg" | tail -1)"
ln -s "$other" "$KT_TMP/link"
expect_eq "user: a symlink to a cgroup refused" invalid_cgroup \
	"$(user_open "$KT_TMP/link" | tail -1)"

deleg=$(cg_make deleg)
chown "$U" "$deleg" "$deleg/cgroup.procs"
out=$(user_open "$deleg")
usid=$(head -1 <<<"$out")
expect_eq "user: open on a delegated cgroup" ok "$(tail -1 <<<"$out")"
expect_eq "user: lists its own session" 1 "$(user_ctl session list | grep -c "$usid")"
mkdir "$KT_CG/granted/g1"
out=$(user_open "$KT_CG/granted/g1")
gsid=$(head -1 <<<"$out")
expect_eq "user: open under a kwitnessd.conf grant" ok "$(tail -1 <<<"$out")"
# A grant covers whole path components: a root-owned sibling whose name
# starts with the granted one's is not under it.
mkdir "$KT_CG/granted-other"
expect_eq "user: open on a root-owned sibling of the grant (granted-other) refused" forbidden_cgroup \
	"$(user_open "$KT_CG/granted-other" | tail -1)"

# A process inside a session cannot use the socket: root in the user's
# session, the user in it, root in root's session.
out=$(cg_run "$deleg" "$KW" session list --socket "$KT_SOCK" 2>&1)
expect_eq "root inside a session: forbidden_from_session" 1 \
	"$(grep -c 'forbidden_from_session' <<<"$out")"
out=$(cg_run "$rootcg" "$KW" session close --socket "$KT_SOCK" "$rsid" 2>&1)
expect_eq "root inside its own session cannot close it" 1 \
	"$(grep -c 'forbidden_from_session' <<<"$out")"
out=$(cg_run "$KT_CG/granted/g1" "$SETPRIV" --reuid="$U" --regid="$G" --init-groups \
	"$KW" session list --socket "$KT_SOCK" 2>&1)
expect_eq "user inside a session: forbidden_from_session" 1 \
	"$(grep -c 'forbidden_from_session' <<<"$out")"

# After a crash the resumed sessions keep their owners.
{ kill -KILL "$KT_DPID"; wait "$KT_DPID"; } 2>/dev/null
if start_kwd; then
	out=$(user_ctl session list)
	expect_eq "after a restart: the user lists its two sessions, not root's" "2 0" \
		"$(grep -c -e "$usid" -e "$gsid" <<<"$out") $(grep -c "$rsid" <<<"$out")"
	expect_eq "after a restart: closing root's session still refused" forbidden_session \
		"$(user_ctl session close "$rsid" | tail -1)"
else
	not_ok "kwitnessd restarts on its pins"
fi

for sid in "$usid" "$gsid"; do
	expect_eq "user: closes its own session $sid" ok \
		"$(user_ctl session close "$sid" | tail -1)"
done
expect_eq "root: closes its session" 0 "$(session_close "$rsid" >/dev/null; echo $?)"
check "kwitnessd is still running" kwd_alive
finish
