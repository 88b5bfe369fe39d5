#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# No single host can rewrite the estate (issue 31): on a private PostgreSQL
# with the roles `kwitness estate roles` sets up, a host's push credentials
# store its own records, but cannot UPDATE or DELETE anything nor insert a
# record of another signer (the database refuses); a row changed afterwards
# with administrator credentials (a denial deleted, the level raised) is
# shown as TAMPERED by estate verify, estate query and estate report. The
# same tampering on SQLite is found the same way. A procs row (estate query
# --exe, --digest, --ancestor) that the entries do not derive is found by
# estate verify too, and a push role cannot add one to another signer's record.
source "$(dirname "$0")/../lib.sh"
. "$KW_ROOT/tests/kernel/pg_lib.sh"

LOGGEN=$KW_BUILD/tests/kw-loggen
if [ ! -x "$KW" ] || [ ! -x "$LOGGEN" ] || ! command -v sqlite3 >/dev/null; then
	not_ok "kwitness, kw-loggen or sqlite3 missing"
	finish
fi
T=$(mktemp -d /tmp/kw-estate-roles.XXXXXX)
trap 'pg_cleanup; rm -rf "$T"' EXIT
printf '{"kwitness_policy":1,"mode":"enforce","net":{"connect":["10.0.0.0/8:443"]}}\n' >"$T/bundle"
BH=$(sha256sum "$T/bundle" | cut -c1-64)
IMAGE=sha256:$(printf 'a%.0s' $(seq 64))
. "$KW_ROOT/tests/cli/estate_lib.sh"
session() { estate_session "$1" "$2" "$3" estate_sign_plain "${@:4}"; }
A1=$(session alpha 60 1)
B1=$(session beta 60 2)
A_DENIES=$(grep -c '"decision":"deny"' "$T/hosts/alpha/logs/$A1.jsonl")

# tamper_suite LABEL URL SQL-FN: the administrator deletes one of alpha's
# denials and raises its level; verify, query and report see it.
tamper_suite() {
	local l=$1 url=$2 q=$3 out rc err
	out=$("$KW" estate verify --db "$url" --trust "$T/trust"); rc=$?
	expect_eq "$l: estate verify of the untouched estate: exit 0, all hold" \
		"0 summary: 2 records re-derived: 2 hold, 0 tampered" "$rc $out"
	$q "DELETE FROM entries WHERE record_id = (SELECT id FROM records WHERE session = '$A1')
		AND line = (SELECT min(line) FROM entries WHERE decision = 'deny'
		AND record_id = (SELECT id FROM records WHERE session = '$A1'))" >/dev/null
	$q "UPDATE records SET level = 2, trace_level = 'Level 2', denials = denials - 1 WHERE session = '$A1'" >/dev/null
	out=$("$KW" estate verify --db "$url" --trust "$T/trust"); rc=$?
	expect_eq "$l: estate verify: exit 1, one tampered" "1 1 tampered" "$rc $(grep -o '[0-9]* tampered$' <<<"$out")"
	check "$l: ...naming alpha's session and why" grep -q "^tampered: session $A1 (record [0-9]*): entries: line" <<<"$out"
	expect_eq "$l: estate query: alpha's rows show TAMPERED, not Level 2" "TAMPERED" \
		"$("$KW" estate query --db "$url" --session "$A1" --json 2>/dev/null | jq -r .level_name | sort -u)"
	expect_eq "$l: ...beta's rows keep their level" "Level 0" \
		"$("$KW" estate query --db "$url" --session "$B1" --json 2>/dev/null | jq -r .level_name | sort -u)"
	err=$("$KW" estate query --db "$url" --decision deny --count 2>&1 >/dev/null)
	check "$l: estate query --count warns that a record is tampered" grep -q "1 stored records failed estate verify (TAMPERED)" <<<"$err"
	out=$("$KW" estate report --db "$url" --trust "$T/trust" --session "$A1"); rc=$?
	expect_eq "$l: estate report: exit 1, TAMPERED, no level" "1 1 1" \
		"$rc $(grep -c '^verdict: TAMPERED: ' <<<"$out") $(grep -c '; no level: the record does not hold' <<<"$out")"
	check "$l: ...never Level 2" bash -c '! grep -q "Level 2" <<<"$1"' _ "$out"
	"$KW" estate report --db "$url" --trust "$T/trust" --session "$A1" --html "$T/a1.html" >/dev/null
	check "$l: the HTML page: INVALID (TAMPERED), its level TAMPERED" \
		bash -c 'grep -q "id=\"verdict\" class=\"invalid\">INVALID (TAMPERED)" "$1" && grep -q "<p id=\"level\"><span class=\"bad\">TAMPERED</span>" "$1"' _ "$T/a1.html"
}

# forged_proc SQL-FN SESSION: a procs row no proc entry derives (the logs
# have none), making `estate query --exe /usr/bin/curl` name SESSION.
forged_proc() {
	$1 "INSERT INTO procs (record_id, line, seq, proc, tree_parent, event, exe, argv, digest,
		inherited) VALUES ((SELECT id FROM records WHERE session = '$2'), 2, 1, '4242-1', NULL,
		'exec', '/usr/bin/curl', 'curl x', NULL, 0)" 2>&1
}
# procs_suite LABEL URL SQL-FN: estate verify derives procs again from the
# entries; a forged row is an extra one, named, exit 1; removed, all hold.
procs_suite() {
	local l=$1 url=$2 q=$3 out rc
	forged_proc "$q" "$B1" >/dev/null
	out=$("$KW" estate verify --db "$url" --trust "$T/trust"); rc=$?
	expect_eq "$l: a forged procs row: estate verify exits 1, one tampered" "1 1 tampered" \
		"$rc $(grep -o '[0-9]* tampered$' <<<"$out")"
	check "$l: ...beta's session, an extra procs row" \
		grep -q "^tampered: session $B1 (record [0-9]*): procs: an extra row at entry 2 (no proc entry derives it)" <<<"$out"
	$q "DELETE FROM procs" >/dev/null
	out=$("$KW" estate verify --db "$url" --trust "$T/trust"); rc=$?
	expect_eq "$l: the forged row removed: all hold again" \
		"0 summary: 2 records re-derived: 2 hold, 0 tampered" "$rc $out"
}

# SQLite: the administrator is whoever can write the file.
DB=$T/e.sqlite
"$KW" estate ingest --create --db "sqlite:$DB" --trust "$T/trust" "$T/hosts" >/dev/null
procs_suite sqlite "sqlite:$DB" "sqlite3 $DB"
tamper_suite sqlite "sqlite:$DB" "sqlite3 $DB"

if [ "$(id -u)" -ne 0 ]; then
	skip "PostgreSQL: pg_lib.sh runs a private server as user nobody, which needs root"
	finish
fi
if ! pg_init; then
	not_ok "PostgreSQL: the private server could not be started"
	finish
fi
ADMIN=$PGURL
PUSH_A="postgresql:///estate?host=$PG_TMP&user=kwitness_push_alpha"
as_alpha() { "$PG_BIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$PG_TMP" -U kwitness_push_alpha -d estate -c "$1" 2>&1; }
"$KW" estate query --db "$ADMIN" --count >/dev/null 2>&1 # the schema, made by the administrator
out=$("$KW" estate roles --trust "$T/trust" --db "$ADMIN" --apply); rc=$?
expect_eq "estate roles --apply: two push roles" "0 roles: 2 push roles set up" "$rc $out"
check "estate roles prints the same SQL without --apply" \
	bash -c '"$1" estate roles --trust "$2" | grep -q "CREATE POLICY \"push_alpha\" ON records FOR INSERT"' _ "$KW" "$T/trust"

out=$("$KW" estate ingest --create --db "$PUSH_A" --trust "$T/trust" "$T/hosts/alpha"); rc=$?
expect_eq "alpha's push role stores alpha's record" "0 1 stored" "$rc $(grep -o '[0-9]\+ stored' <<<"$out" | head -1)"
out=$("$KW" estate ingest --create --db "$PUSH_A" --trust "$T/trust" "$T/hosts/beta" 2>&1); rc=$?
expect_eq "alpha's push role cannot store beta's record: row-level security (exit 2)" "2 1" \
	"$rc $(grep -c 'row-level security' <<<"$out")"
for stmt in "UPDATE records SET level = 2" "DELETE FROM entries" "DELETE FROM records" \
	"UPDATE entries SET decision = 'permit'" "TRUNCATE entries" "DELETE FROM record_checks"; do
	out=$(as_alpha "$stmt"); rc=$?
	expect_eq "push credentials: '$stmt' fails at the database (permission denied)" "1 1" \
		"$((rc != 0)) $(grep -c 'permission denied' <<<"$out")"
done
out=$(as_alpha "INSERT INTO records (session, record_digest, sandbox_id, hostname, machine_id, boot_id,
	kernel, signer, bundle_hash, enforcement_mode, platform, level, complete, incomplete_why, iat,
	opened_us, closed_us, decisions, denials, transcript_hash, call_count, image_digest, record_path,
	record_json, ingested_at) VALUES ('x', 'y', 's', 'beta', 'm', 'b', 'k', 'another-signer', 'h', 'enforce',
	'software-only', 2, 1, '', 0, 0, 0, 0, 0, 't', 0, 'i', 'p', '{}', 0)"); rc=$?
expect_eq "push credentials: a record row of another signer is refused by row-level security" "1 1" \
	"$((rc != 0)) $(grep -c 'row-level security' <<<"$out")"
expect_eq "...and nothing changed: alpha's denials are all there" "$A_DENIES" \
	"$("$KW" estate query --db "$ADMIN" --session "$A1" --decision deny --count)"
"$KW" estate ingest --create --db "$ADMIN" --trust "$T/trust" "$T/hosts/beta" >/dev/null
out=$(forged_proc as_alpha "$B1"); rc=$?
expect_eq "push credentials: a procs row for another signer's record is refused by row-level security" \
	"1 1" "$((rc != 0)) $(grep -c 'row-level security' <<<"$out")"
out=$(forged_proc as_alpha "$A1"); rc=$?
expect_eq "push credentials: a procs row for its own record: the database takes it" "0" "$rc"
out=$("$KW" estate verify --db "$ADMIN" --trust "$T/trust"); rc=$?
expect_eq "...and estate verify finds it: exit 1, alpha's session, an extra procs row" "1 1" \
	"$rc $(grep -c "^tampered: session $A1 (record [0-9]*): procs: an extra row at entry 2" <<<"$out")"
pg_q "DELETE FROM procs" >/dev/null
procs_suite postgresql "$ADMIN" pg_q
tamper_suite postgresql "$ADMIN" pg_q
finish
