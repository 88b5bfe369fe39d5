#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kwitness estate and the transparency log, without a kernel: sessions of
# two synthetic hosts (kw-loggen logs, records really signed), some signed
# once and logged with `kwitness tlog sign` in a local log cosigned by two
# local witnesses, ingested with --transparency into SQLite and into a
# private PostgreSQL server. A record with a valid proof is stored at
# "Level 0, logged" with its leaf index and the cosigned checkpoint (checked
# against the proof file and the log's own checkpoint); a tampered or
# missing proof leaves the record at Level 0 with the failing step; a
# record without a URL stays Level 0; without --transparency nothing is
# logged. The stored level is what `kwitness verify --transparency` reports.
source "$(dirname "$0")/../lib.sh"

LOGGEN=$KW_BUILD/tests/kw-loggen
if [ ! -x "$KW" ] || [ ! -x "$LOGGEN" ]; then
	not_ok "kwitness or the test helpers are not built"
	finish
fi
command -v sqlite3 >/dev/null || { not_ok "sqlite3 missing (scripts/deps.sh installs it)"; finish; }
T=$(mktemp -d /tmp/kw-estate-tlog.XXXXXX)
. "$KW_ROOT/tests/kernel/pg_lib.sh"
trap 'pg_cleanup; rm -rf "$T"' EXIT
unset TRACE_PRIVATE_KEY_PEM

printf '{"kwitness_policy":1,"mode":"enforce","net":{"connect":["10.0.0.0/8:443"]}}\n' >"$T/bundle"
BH=$(sha256sum "$T/bundle" | cut -c1-64)
IMAGE=sha256:$(printf 'a%.0s' $(seq 64))
mkdir -p "$T/trust"

# The log and its two witnesses, and the policy that trusts them.
for k in log w1 w2; do "$KW" keygen --out "$T/$k.pem" >/dev/null; done
ORIGIN=estate.example.org/log
LOG=$T/log
"$KW" tlog init "$LOG" --origin $ORIGIN --key "$T/log.pem" >"$T/log.vkey"
{
	echo "log $(cat "$T/log.vkey")"
	echo "witness W1 $("$KW" tlog vkey --key "$T/w1.pem" --name w1.example --witness)"
	echo "witness W2 $("$KW" tlog vkey --key "$T/w2.pem" --name w2.example --witness)"
	echo "group both all W1 W2"
	echo "quorum both"
} >"$T/policy"
WIT=(--witness-at "local:w1.example:$T/w1.pem:$T/ws1" --witness-at "local:w2.example:$T/w2.pem:$T/ws2")

. "$KW_ROOT/tests/cli/estate_lib.sh"
# A SIGN for estate_session: signed once, logged, cosigned (log sign writes
# RECORD and RECORD.tlog-proof).
sign_logged() {
	"$KW" tlog sign "$LOG" --key "$T/log.pem" --signing-key "$T/$1.pem" "${WIT[@]}" \
		--witness-policy "$T/policy" --out "$3" "$2" >/dev/null || echo "# log sign failed for $3" >&2
}
# session HOST N SEED logged|plain: prints the session id.
session() { estate_session "$1" "$2" "$3" "$([ "$4" = logged ] && echo sign_logged || echo estate_sign_plain)"; }
S_OK=$(session alpha 50 1 logged)      # leaf 0
S_BAD=$(session alpha 40 2 logged)     # leaf 1: its proof is tampered below
S_OK2=$(session beta 30 3 logged)      # leaf 2
S_PLAIN=$(session beta 20 4 plain)     # no transparency URL
S_GONE=$(session beta 10 5 logged)     # leaf 3: its proof is removed below
rec() { echo "$T/hosts/$2/records/$1.json"; }
check "log sign wrote a record with a URL and its proof" \
	test -s "$(rec "$S_OK" alpha).tlog-proof" -a "$(jq -r .transparency "$(rec "$S_OK" alpha)" | cut -c1-8)" = "https://"
check "the plain record carries no transparency URL" test "$(jq .transparency "$(rec "$S_PLAIN" beta)")" = null
# Tamper one audit path hash; drop one proof.
awk '/^index /{print; getline; printf "%s%s\n", ($0 ~ /^A/ ? "B" : "A"), substr($0,2); next} {print}' \
	"$(rec "$S_BAD" alpha).tlog-proof" >"$T/badproof" && mv "$T/badproof" "$(rec "$S_BAD" alpha).tlog-proof"
rm "$(rec "$S_GONE" beta).tlog-proof"

# What kwitness verify --transparency says of each, for the same records.
verify_says() { # SID HOST: the level line of verify --transparency (or its invalid line)
	"$KW" verify --key "$T/trust/$2.jwk" --max-age 0 --transparency "$T/policy" \
		--log "$T/hosts/$2/logs/$1.jsonl" --policy "$T/bundle" "$(rec "$1" "$2")" 2>&1 |
		grep -E '^(level|invalid)' | cut -d: -f1-2
}
expect_eq "verify --transparency: the good record is level 0, logged" "level 0, logged" \
	"$(verify_says "$S_OK" alpha | cut -d: -f1)"
expect_eq "verify --transparency: the tampered proof fails at step 6" "invalid: tlog_inclusion_invalid" \
	"$(verify_says "$S_BAD" alpha)"

# The checkpoint a proof carries: the lines after its first empty line.
proof_checkpoint() { sed '1,/^$/d' "$1"; }

# estate_checks NAME URL SQL-FN: ingest and check on one backend; SQL-FN
# runs a query and prints rows with '|' between columns.
estate_checks() {
	local name=$1 db=$2 q=$3 out rc row want
	out=$("$KW" estate ingest --create --db "$db" --trust "$T/trust" --transparency "$T/policy" "$T/hosts"); rc=$?
	expect_eq "$name: ingest --transparency: exit 0, five stored, two logged" \
		"0 summary: 5 records: 5 stored (0 incomplete, 0 at level 1), 0 already stored, 0 rejected; logged: 2 (0 at level 2, 2 at level 0, logged)" \
		"$rc ${out%; * entries in*}"
	levels=$("$KW" estate query --db "$db" --limit 0 --json |
		jq -r '"\(.session) \(.level) \(.level_name) \(.log_index)"' | sort -u)
	for s in "$S_OK:0 Level 0, logged 0" "$S_OK2:0 Level 0, logged 2" "$S_BAD:0 Level 0 null" \
		"$S_PLAIN:0 Level 0 null" "$S_GONE:0 Level 0 null"; do
		expect_eq "$name: query --json: ${s%%:*} is ${s#*:}" "${s%%:*} ${s#*:}" \
			"$(grep "^${s%%:*} " <<<"$levels")"
	done
	row=$("$KW" estate query --db "$db" --session "$S_OK2" --limit 1 --wide | sed -n 2p)
	check "$name: query's table shows the level and the leaf index" \
		grep -qE " Level 0, logged +2 " <<<"$row"
	# The stored checkpoint is the one the proof file carries.
	row=$($q "SELECT log_origin, log_index, checkpoint_size, checkpoint_root FROM records WHERE session = '$S_OK'")
	want="$ORIGIN|0|$(proof_checkpoint "$(rec "$S_OK" alpha).tlog-proof" | sed -n 2p)|$(proof_checkpoint "$(rec "$S_OK" alpha).tlog-proof" | sed -n 3p)"
	expect_eq "$name: origin, index, checkpoint size and root hash as in the proof file" "$want" "$row"
	expect_eq "$name: the stored checkpoint is the proof's signed note, byte for byte" \
		"$(proof_checkpoint "$(rec "$S_OK" alpha).tlog-proof" | sha256sum)" \
		"$($q "SELECT checkpoint FROM records WHERE session = '$S_OK'" | sed '$d' | sha256sum)"
	expect_eq "$name: the tampered proof: Level 0, the failing step stored, no index" \
		"Level 0|tlog_inclusion_invalid: transparency step 6||" \
		"$($q "SELECT trace_level, substr(transparency, 1, 43), log_origin, log_index FROM records WHERE session = '$S_BAD'")"
	expect_eq "$name: the missing proof: Level 0, why stored" "Level 0|tlog_proof_missing" \
		"$($q "SELECT trace_level, substr(transparency, 1, 18) FROM records WHERE session = '$S_GONE'")"
	expect_eq "$name: the record without a URL: Level 0, nothing to say" "Level 0||" \
		"$($q "SELECT trace_level, transparency, log_origin FROM records WHERE session = '$S_PLAIN'")"
	out=$("$KW" estate report --db "$db" --trust "$T/trust" --session "$S_OK")
	check "$name: estate report (text) says Level 0, logged" grep -q "; Level 0, logged$" <<<"$out"
	check "$name: ...and the entry and checkpoint it was proven in" \
		grep -qF "logged: entry 0 of $ORIGIN (checkpoint of " <<<"$out"
	"$KW" estate report --db "$db" --trust "$T/trust" --session "$S_BAD" --html "$T/bad.html" >/dev/null
	check "$name: estate report --html shows the level and why the log proof failed" \
		sh -c "grep -q '<p id=\"level\">Level 0</p>' '$T/bad.html' && grep -q 'tlog_inclusion_invalid' '$T/bad.html'"
}

sq() { sqlite3 "$T/e.sqlite" "$1"; }
estate_checks SQLite "sqlite:$T/e.sqlite" sq
expect_eq "SQLite: re-ingesting adds nothing" \
	"summary: 5 records: 0 stored (0 incomplete, 0 at level 1), 5 already stored, 0 rejected" \
	"$("$KW" estate ingest --create --db "sqlite:$T/e.sqlite" --trust "$T/trust" --transparency "$T/policy" "$T/hosts" | cut -d';' -f1)"

# Without --transparency nothing is logged: the URL is noted, not believed.
out=$("$KW" estate ingest --create --db "sqlite:$T/n.sqlite" --trust "$T/trust" "$T/hosts")
check "without --transparency: no logged count in the summary" sh -c '! grep -q logged' <<<"$out"
expect_eq "without --transparency: every record Level 0, the logged ones say why" \
	"Level 0|4|0" "$(sqlite3 "$T/n.sqlite" "SELECT group_concat(DISTINCT trace_level), sum(transparency LIKE 'transparency not checked%'), count(log_index) FROM records")"

# A record file given by itself: its proof is the file beside it.
out=$("$KW" estate ingest --create --db "sqlite:$T/one.sqlite" --trust "$T/trust" --transparency "$T/policy" "$(rec "$S_OK2" beta)")
expect_eq "a record file by itself: its proof beside it is used" "Level 0, logged|2" \
	"$(sqlite3 "$T/one.sqlite" "SELECT trace_level, log_index FROM records")"

# A database made before the transparency columns gets them, its levels named.
{
	echo "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL);"
	sed 's/@ID_PK@/INTEGER PRIMARY KEY/' "$KW_ROOT/user/estate/sql/0001_estate.sql" "$KW_ROOT/user/estate/sql/0002_appraisal.sql"
	echo "INSERT INTO schema_version VALUES (1, 0), (2, 0);"
} | sqlite3 "$T/v2.sqlite"
"$KW" estate ingest --create --db "sqlite:$T/v2.sqlite" --trust "$T/trust" "$T/hosts/beta" >/dev/null
sqlite3 "$T/v2.sqlite" "UPDATE schema_version SET version = version" # still readable by the tool
expect_eq "migration 3 on a version 2 database: applied once, the records named by level" \
	"1|2|3|4|5|6 Level 0" \
	"$(sqlite3 "$T/v2.sqlite" 'SELECT version FROM schema_version ORDER BY version' | paste -sd'|') $(sqlite3 "$T/v2.sqlite" 'SELECT DISTINCT trace_level FROM records')"

# Bad input: one line, exit 2.
printf 'log not-a-vkey\n' >"$T/badpolicy"
err=$("$KW" estate ingest --create --db "sqlite:$T/x.sqlite" --trust "$T/trust" --transparency "$T/badpolicy" "$T/hosts" 2>&1 >/dev/null); rc=$?
check "a bad --transparency policy: exit 2, one line naming it" \
	test $rc -eq 2 -a "$(grep -c . <<<"$err")" -eq 1 -a -n "$(grep -F "$T/badpolicy" <<<"$err")"
err=$("$KW" estate ingest --create --db "sqlite:$T/x.sqlite" --trust "$T/trust" --transparency "$T/none" "$T/hosts" 2>&1 >/dev/null); rc=$?
check "a missing --transparency policy: exit 2, one line" test $rc -eq 2 -a "$(grep -c . <<<"$err")" -eq 1

# PostgreSQL: the same checks on a private server.
if [ "$(id -u)" -ne 0 ]; then
	skip "PostgreSQL: pg_lib.sh runs a private server as user nobody, which needs root"
elif pg_init; then
	estate_checks PostgreSQL "$PGURL" pg_q
else
	not_ok "PostgreSQL: the private server could not be started"
fi
finish
