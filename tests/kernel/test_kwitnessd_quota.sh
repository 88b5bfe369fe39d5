#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Quotas per client (docs/security.md, "One local user takes every slot"): a
# non-root user with a kwitnessd.conf grant opens sessions until refused; the
# refusal (too_many_sessions) names the limit, max_sessions_per_user
# (default 16); refused opens leave no descriptor behind; root still opens.
# With root_reserved_sessions set so that non-root users together may hold
# only a few slots, the user is refused at that bound, naming it, and root
# still opens. A user's control connections are capped too (32), root's
# are not.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kwd_lib.sh"

kwd_require
SETPRIV=$(command -v setpriv) || kt_fail_all "setpriv is not installed (util-linux)"

kt_user_add kwq
chmod 711 "$KT_TMP"
mkdir -p "$KT_CG/granted"
POL=$(policy_file p '{"kwitness_policy":1,"mode":"enforce","record":"all"}')
chmod 644 "$POL"

# user_open CGROUP: the user's open; prints the session id or the error line
user_open() {
	"$SETPRIV" --reuid="$U" --regid="$G" --init-groups "$KW" session open --socket "$KT_SOCK" \
		--cgroup "$1" --policy "$POL" --sandbox-id "spiffe://test.kwitness.local/q/$$" \
		--image-digest "$DIGEST" 2>&1
}

# opens_until_refused MAX: the user opens sessions on fresh granted cgroups
# until one is refused (or MAX opened); sets OPENED and REFUSAL.
opens_until_refused() {
	local i out
	OPENED=0 REFUSAL=
	for i in $(seq "$1"); do
		mkdir -p "$KT_CG/granted/g$i"
		out=$(user_open "$KT_CG/granted/g$i")
		if [[ $out =~ ^[0-9a-f]{32}$ ]]; then
			OPENED=$((OPENED + 1))
		else
			REFUSAL=$out
			return
		fi
	done
}
fds() { ls "/proc/$KT_DPID/fd" | wc -l; }

printf 'group = %s\ngrant = %s %s\n' "$KT_GROUP" "$KT_USER" "$KT_CG/granted" >"$KT_TMP/kw.conf"
kwd_start --config "$KT_TMP/kw.conf"
opens_until_refused 40
echo "# refused after $OPENED: $REFUSAL"
expect_eq "a non-root user opens 16 sessions (the default max_sessions_per_user), no more" 16 "$OPENED"
check "the refusal is too_many_sessions and names max_sessions_per_user = 16" \
	grep -q 'too_many_sessions: .*max_sessions_per_user = 16' <<<"$REFUSAL"
before=$(fds)
for i in $(seq 30 45); do
	mkdir -p "$KT_CG/granted/g$i"
	user_open "$KT_CG/granted/g$i" >/dev/null
done
expect_eq "16 refused opens leave kwitnessd's descriptors as they were" "$before" "$(fds)"
rcg=$(cg_make root1)
rsid=$(session_open "$rcg" "$POL")
check "root still opens a session" test -n "$rsid"
expect_eq "status shows the quota" "16 64" \
	"$("$KW" status --socket "$KT_SOCK" --json | jq -r '"\(.quota.max_sessions_per_user) \(.quota.root_reserved_sessions)"')"

# Connections: 32 held by the user (KWD_CLIENTS_PER_USER); its next one is
# refused as busy, root's is served.
mkfifo "$KT_TMP/holdfifo"
for i in $(seq 32); do
	"$SETPRIV" --reuid="$U" --regid="$G" --init-groups "$NP" hold "$KT_SOCK" '{' \
		<"$KT_TMP/holdfifo" >>"$KT_TMP/held" 2>&1 &
done
exec 9>"$KT_TMP/holdfifo"
for _ in $(seq 100); do [ "$(grep -c connected "$KT_TMP/held")" -ge 32 ] && break; sleep 0.1; done
expect_eq "the user holds 32 control connections" 32 "$(grep -c connected "$KT_TMP/held")"
out=$("$SETPRIV" --reuid="$U" --regid="$G" --init-groups "$KW" session list --socket "$KT_SOCK" 2>&1)
check "its 33rd is refused: busy, too many connections from this user" \
	grep -q 'busy: too many control connections from this user' <<<"$out"
root_list() { "$KW" session list --socket "$KT_SOCK" >/dev/null; }
check "root's connection is served meanwhile" root_list
exec 9>&-
for _ in $(seq 50); do pgrep -f "kw-netprobe hold $KT_SOCK" >/dev/null || break; sleep 0.1; done
kwd_stop
rm -f "$KT_SOCK"
for d in "$KT_CG"/granted/g*; do rmdir "$d"; done

# Non-root users together hold at most 1024 - root_reserved_sessions.
printf 'group = %s\ngrant = %s %s\nmax_sessions_per_user = 10\nroot_reserved_sessions = 1020\n' \
	"$KT_GROUP" "$KT_USER" "$KT_CG/granted" >"$KT_TMP/kw.conf"
kwd_start --config "$KT_TMP/kw.conf"
opens_until_refused 12
echo "# refused after $OPENED: $REFUSAL"
expect_eq "with 1020 slots kept for root, non-root users hold 4" 4 "$OPENED"
check "the refusal names root_reserved_sessions" grep -q 'too_many_sessions: .*root_reserved_sessions' <<<"$REFUSAL"
rcg=$(cg_make root2)
rsid=$(session_open "$rcg" "$POL")
check "root still opens a session" test -n "$rsid"
kwd_stop
for d in "$KT_CG"/granted/g*; do rmdir "$d" 2>/dev/null; done

printf 'max_sessions_per_user = 0\n' >"$KT_TMP/bad.conf"
out=$(timeout 20 "$KWD" --foreground --state-dir "$KT_TMP/state-x" --socket "$KT_TMP/x.sock" --pin-dir none \
	--key "$KT_TMP/key.pem" --config "$KT_TMP/bad.conf" 2>&1)
check "kwitnessd refuses max_sessions_per_user = 0" grep -q 'max_sessions_per_user must be a number from 1 to 1024' <<<"$out"
finish
