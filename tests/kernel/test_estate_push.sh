#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Records reach an estate database through kwitnessd's spool (config
# "estate = postgresql://..."), shipped by `kwitness estate push --follow`,
# a process of its own without any capability (kwitnessd links no database
# client): a private PostgreSQL server is stopped during three closes and
# started again, and all three arrive, once each; a session closed while the
# database is down, with the collector and the shipper then stopped, is
# shipped from the spool by a one-shot push once the database is back.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kwd_lib.sh"
. "$(dirname "$0")/pg_lib.sh"

kwd_require
SHIP_PID=
ship_stop() {
	[ -n "$SHIP_PID" ] || return 0
	kill -TERM "$SHIP_PID" 2>/dev/null
	wait "$SHIP_PID" 2>/dev/null
	SHIP_PID=
}
trap 'ship_stop; pg_cleanup; kwd_cleanup' EXIT
pg_init || kt_fail_all "a private PostgreSQL cluster does not start"
# The shipper holds no capability, so it reaches the server's socket as
# anybody would (the data folder inside stays the server's own, 0700).
chmod 711 "$PG_TMP"
printf 'estate = %s\n' "$PGURL" >"$KT_TMP/kwitnessd.conf"

expect_eq "kwitnessd links no SQL, LDAP or Kerberos library" "" \
	"$(ldd "$KWD" | grep -E 'libpq|libsqlite|libldap|liblber|libkrb5|libgssapi|libsasl' | awk '{print $1}' | paste -sd' ')"

kwd_start --config "$KT_TMP/kwitnessd.conf"
kwd_has_hook net.connect || kt_skip_feature net.connect "net.connect hooks unavailable on this kernel"

# The shipper: root's uid for the state folder's files, but no capability
# (no bounding, inheritable or ambient set; no new privileges).
PUSH=(estate push --state "$KT_TMP/state" --config "$KT_TMP/kwitnessd.conf" --key "$KT_TMP/signer.jwk")
NOCAPS=(setpriv --bounding-set=-all --inh-caps=-all --ambient-caps=-all --no-new-privs)
ship_start() {
	"${NOCAPS[@]}" "$KW" "${PUSH[@]}" --follow >>"$KT_TMP/push.log" 2>&1 &
	SHIP_PID=$!
}
ship_start
sleep 0.5
expect_eq "the shipper runs without capabilities" "0000000000000000" \
	"$(awk '/^CapEff:/ {print $2}' "/proc/$SHIP_PID/status" 2>/dev/null)"
listeners_start
POL=$(policy_file push "{\"kwitness_policy\":1,\"mode\":\"enforce\",\"net\":{\"connect\":[\"127.0.0.1/32:$LPORT_A\"]}}")
SPOOL=$KT_TMP/state/spool

n=0
# one_session: opens, connects twice (allowed, denied), closes; prints the id.
one_session() {
	local cg sid
	n=$((n + 1))
	cg=$(cg_make "s$n")
	sid=$(session_open "$cg" "$POL" "spiffe://test.kwitness.local/push-$$/$n") || return 1
	cg_run "$cg" "$NP" connect 127.0.0.1 "$LPORT_A" >/dev/null
	cg_run "$cg" "$NP" connect 127.0.0.1 "$LPORT_B" >/dev/null
	session_close "$sid" >/dev/null || return 1
	echo "$sid"
}
estate_line() { "$KW" status --socket "$KT_SOCK" | sed -n 's/^estate: *//p'; }
# wait_for SECONDS CMD...: until CMD succeeds.
wait_for() {
	local s=$1
	shift
	for _ in $(seq $((s * 5))); do
		"$@" && return 0
		sleep 0.2
	done
	return 1
}
backlog_is() { [[ "$(estate_line)" == "$1 waiting in the spool "* ]]; }
status_has() { grep -q "$1" <<<"$(estate_line)"; }
stored() { pg_q "SELECT session FROM records ORDER BY session" 2>/dev/null | paste -sd' '; }
sorted() { printf '%s\n' "$@" | sort | paste -sd' '; }
stored_is() { test "$(stored)" = "$1"; }

check "the collector says what ships its spool" wait_for 10 \
	grep -q 'estate: records are spooled in .*run `kwitness estate push --follow' "$KT_TMP/kwitnessd.log"

# --- the database up: a closed session arrives -------------------------------
S0=$(one_session)
check "a session closed with the database up is pushed" wait_for 30 stored_is "$S0"
check "status: nothing waits" wait_for 10 backlog_is 0
check "...and says who ships it" status_has '^0 waiting in the spool for `kwitness estate push`$'
check "the shipper says what it pushed" wait_for 10 grep -q '^pushed 1 records (1 stored' "$KT_TMP/push.log"

# --- the database down during three closes -----------------------------------
pg_down
S1=$(one_session) S2=$(one_session) S3=$(one_session)
expect_eq "three closes while the database is down: their records are written" 3 \
	"$(ls "$KT_TMP/state/records/"{$S1,$S2,$S3}.json 2>/dev/null | wc -l)"
expect_eq "...and spooled" "$(sorted "$S1" "$S2" "$S3")" "$(ls "$SPOOL" | sort | paste -sd' ')"
check "status: three wait" wait_for 10 backlog_is 3
check "the shipper says why, and that it retries" \
	wait_for 10 grep -q 'records wait; retrying in [0-9]* s' "$KT_TMP/push.log"
pg_up || kt_fail_all "the server does not start again"
check "the database back: the spool drains (retry with backoff)" wait_for 90 backlog_is 0
expect_eq "all four sessions are in the database" "$(sorted "$S0" "$S1" "$S2" "$S3")" "$(stored)"
expect_eq "each once" "" "$(pg_q "SELECT session FROM records GROUP BY session HAVING count(*) > 1")"
want=$(cat "$KT_TMP/state/logs/"{$S0,$S1,$S2,$S3}.jsonl | grep -c .)
expect_eq "every log line is an entry" "$want" "$(pg_q "SELECT count(*) FROM entries")"
expect_eq "the denied connects are found, one per session" 4 \
	"$("$KW" estate query --db "$PGURL" --tool net.connect --decision deny --object "$LPORT_B" --count)"
expect_eq "the spool is empty" "" "$(ls "$SPOOL")"
expect_eq "nothing was rejected" 0 "$(pg_q "SELECT count(*) FROM rejected")"

# --- the collector and the shipper stopped: the spool keeps the record ---------
pg_down
S4=$(one_session)
check "closed with the database down: spooled" test -e "$SPOOL/$S4"
ship_stop
kwd_stop
"${NOCAPS[@]}" "$KW" "${PUSH[@]}" >"$KT_TMP/push1.out" 2>"$KT_TMP/push1.err"
expect_eq "a push with the database down fails (exit 2)" 2 "$?"
check "...and leaves the record spooled" test -e "$SPOOL/$S4"
pg_up || kt_fail_all "the server does not start again"
kwd_start --config "$KT_TMP/kwitnessd.conf"
check "the next collector counts it as waiting" wait_for 10 backlog_is 1
"${NOCAPS[@]}" "$KW" "${PUSH[@]}" >"$KT_TMP/push2.out" 2>"$KT_TMP/push2.err"
expect_eq "a one-shot push ships it (exit 0)" 0 "$?"
check "...and says so" grep -q '^summary: 1 records: 1 stored, 0 already stored, 0 rejected; 0 still spooled$' \
	"$KT_TMP/push2.out"
check "the spool is empty" test ! -e "$SPOOL/$S4"
expect_eq "five sessions, each once" "$(sorted "$S0" "$S1" "$S2" "$S3" "$S4")" "$(stored)"
"${NOCAPS[@]}" "$KW" "${PUSH[@]}" >"$KT_TMP/push3.out" 2>&1
expect_eq "a push of an empty spool changes nothing (exit 0)" \
	"0:summary: 0 records: 0 stored, 0 already stored, 0 rejected; 0 still spooled" "$?:$(cat "$KT_TMP/push3.out")"
kwd_stop
finish
