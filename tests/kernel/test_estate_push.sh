#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kwitnessd pushes each closed session to an estate database (config
# "estate = postgresql://..."), through a spool: a private PostgreSQL server
# is stopped during three closes and started again, and all three arrive,
# once each; a session closed while the database is down and the collector
# then restarted is pushed by the next collector from the spool.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kwd_lib.sh"
. "$(dirname "$0")/pg_lib.sh"

kwd_require
trap 'pg_cleanup; kwd_cleanup' EXIT
pg_init || kt_fail_all "a private PostgreSQL cluster does not start"
printf 'estate = %s\n' "$PGURL" >"$KT_TMP/kwitnessd.conf"
kwd_start --config "$KT_TMP/kwitnessd.conf"
kwd_has_hook net.connect || kt_skip_feature net.connect "net.connect hooks unavailable on this kernel"
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
backlog_is() { [[ "$(estate_line)" == "$1 waiting in the spool"* ]]; }
status_has() { grep -q "$1" <<<"$(estate_line)"; }
stored() { pg_q "SELECT session FROM records ORDER BY session" 2>/dev/null | paste -sd' '; }
sorted() { printf '%s\n' "$@" | sort | paste -sd' '; }
stored_is() { test "$(stored)" = "$1"; }

# --- the database up: a closed session arrives -------------------------------
S0=$(one_session)
check "a session closed with the database up is pushed" wait_for 30 stored_is "$S0"
check "status: nothing waits, one pushed" wait_for 10 backlog_is 0
check "status: ...and says so" status_has '^0 waiting in the spool, 1 pushed, 0 rejected$'

# --- the database down during three closes -----------------------------------
pg_down
S1=$(one_session) S2=$(one_session) S3=$(one_session)
expect_eq "three closes while the database is down: their records are written" 3 \
	"$(ls "$KT_TMP/state/records/"{$S1,$S2,$S3}.json 2>/dev/null | wc -l)"
expect_eq "...and spooled" "$(sorted "$S1" "$S2" "$S3")" "$(ls "$SPOOL" | sort | paste -sd' ')"
check "status: three wait, with the database's error" \
	wait_for 10 status_has '^3 waiting in the spool, 1 pushed, 0 rejected; last error: .'
backlog_is 3 || echo "# status: $(estate_line)"
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

# --- a restart resumes from the spool ------------------------------------------
pg_down
S4=$(one_session)
check "closed with the database down: spooled" test -e "$SPOOL/$S4"
kwd_stop
pg_up || kt_fail_all "the server does not start again"
check "the collector stopped: the session is still spooled" test -e "$SPOOL/$S4"
kwd_start --config "$KT_TMP/kwitnessd.conf"
check "the next collector pushes it from the spool" wait_for 60 test ! -e "$SPOOL/$S4"
expect_eq "five sessions, each once" "$(sorted "$S0" "$S1" "$S2" "$S3" "$S4")" "$(stored)"
kwd_stop
finish
