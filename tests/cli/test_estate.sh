#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kwitness estate without a kernel: synthetic state folders of two hosts
# (kwitnessd-shaped logs from kw-loggen, records really signed), ingested
# into SQLite. Counts against the logs, the time filters, an incomplete log,
# memory that does not grow with the log, and every bad input: one clear
# line, exit 2, never a crash. (tests/kernel/test_estate.sh runs the full
# suite on records of real collectors, on SQLite and PostgreSQL.)
source "$(dirname "$0")/../lib.sh"

LOGGEN=$KW_BUILD/tests/kw-loggen
MAXRSS=$KW_BUILD/tests/kw-maxrss
if [ ! -x "$KW" ] || [ ! -x "$LOGGEN" ] || [ ! -x "$MAXRSS" ]; then
	not_ok "kwitness or the test helpers are not built"
	finish
fi
T=$(mktemp -d /tmp/kw-estate-cli.XXXXXX)
trap 'rm -rf "$T"' EXIT
printf '{"kwitness_policy":1,"mode":"enforce","net":{"connect":["10.0.0.0/8:443"]}}\n' >"$T/bundle"
BH=$(sha256sum "$T/bundle" | cut -c1-64)
IMAGE=sha256:$(printf 'a%.0s' $(seq 64))
mkdir -p "$T/trust"

. "$KW_ROOT/tests/cli/estate_lib.sh"
# session HOST N SEED [LOGGEN ARGS]: a signed session in host folder HOST.
session() { estate_session "$1" "$2" "$3" estate_sign_plain "${@:4}"; }
session alpha 300 1 >/dev/null
session alpha 200 2 >/dev/null
session beta 100 3 >/dev/null
INC=$(session beta 100 4 --gap-every 10)
DB="sqlite:$T/e.sqlite"
ALL=$(cat "$T"/hosts/*/logs/*.jsonl | grep -vc '"tool":"kwitness\.')

out=$("$KW" estate ingest --create --db "$DB" --trust "$T/trust" "$T/hosts"); rc=$?
expect_eq "ingest: exit 0, four stored, one incomplete" \
	"0 summary: 4 records: 4 stored (1 incomplete, 0 at level 1), 0 already stored, 0 rejected" "$rc ${out%%;*}"
expect_eq "every decision of the logs is counted" "$ALL" "$("$KW" estate query --db "$DB" --count)"
expect_eq "denials: as many as the logs hold" \
	"$(cat "$T"/hosts/*/logs/*.jsonl | grep -c '"decision":"deny"')" \
	"$("$KW" estate query --db "$DB" --decision deny --count)"
per_host() { cat "$T/hosts/$1"/logs/*.jsonl | grep -vc '"tool":"kwitness\.'; }
expect_eq "--group-by host" "alpha $(per_host alpha)|beta $(per_host beta)" \
	"$("$KW" estate query --db "$DB" --group-by host --json | jq -r '"\(.hostname) \(.decisions)"' | paste -sd'|')"
expect_eq "--incomplete: the log with gaps only" "$INC" \
	"$("$KW" estate query --db "$DB" --incomplete --json | jq -r .session | sort -u)"
# The first decision's second, from the logs (ts is in microseconds).
FIRST=$(cat "$T"/hosts/*/logs/*.jsonl | grep -v '"tool":"kwitness\.' | sed 's/.*"ts":\([0-9]*\).*/\1/' | sort -n | head -1)
FIRST_S=$((FIRST / 1000000))
expect_eq "--until a second before the first decision: none" 0 \
	"$("$KW" estate query --db "$DB" --until "$(date -u -d @$((FIRST_S - 1)) +%Y-%m-%dT%H:%M:%SZ)" --count)"
expect_eq "--since its second (UTC date and time) takes all" "$ALL" \
	"$("$KW" estate query --db "$DB" --since "$(date -u -d @$FIRST_S +%Y-%m-%dT%H:%M:%S)" --count)"
expect_eq "--since as seconds since the epoch, a second later: fewer" 1 \
	"$(test "$("$KW" estate query --db "$DB" --since $((FIRST_S + 1)) --count)" -lt "$ALL" && echo 1)"
expect_eq "--object 10.0.0.0/8 takes every connect (all go to 10/8)" "$ALL" \
	"$("$KW" estate query --db "$DB" --object 10.0.0.0/8 --count)"
expect_eq "--limit 7 --json: seven rows, in time order" "7 true" \
	"$("$KW" estate query --db "$DB" --limit 7 --json | jq -s '[length, (map(.ts_us) == (map(.ts_us) | sort))] | map(tostring) | join(" ")' -r)"

# Memory: a log 50 times longer takes no more than the fixed bound.
session gamma 2000 5 >/dev/null
"$MAXRSS" "$T/rss-small" "$KW" estate ingest --create --db "sqlite:$T/small.sqlite" --trust "$T/trust" "$T/hosts/gamma" >/dev/null
rm -rf "$T/hosts/gamma"
session gamma 100000 6 >/dev/null
"$MAXRSS" "$T/rss-big" "$KW" estate ingest --create --db "sqlite:$T/big.sqlite" --trust "$T/trust" "$T/hosts/gamma" >/dev/null
small=$(cat "$T/rss-small") big=$(cat "$T/rss-big")
echo "# peak RSS: 2,000 decisions $small KiB, 100,000 decisions $big KiB"
# The bound: the log check's buffers (docs/record.md) and SQLite's page
# cache (32 MiB, sqlite.c), whatever the log's length; into an empty
# database the indexes are built after the load (bulk.h), by a sort that
# spills to temporary files past half the cache: 4 MiB more slack.
check "memory: ingesting 100,000 decisions stays under 64 MiB ($small -> $big KiB)" \
	test "$big" -lt 65536
check "memory: ...and grows by less than the page cache over 2,000 decisions" \
	test "$big" -lt $((small + 32768 + 8192))

# Migrations: a database made at schema version 1 (by the sqlite3 tool,
# from the migration file) is brought to the newest on open, once.
if command -v sqlite3 >/dev/null; then
	{
		echo "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL);"
		sed 's/@ID_PK@/INTEGER PRIMARY KEY/' "$KW_ROOT/user/estate/sql/0001_estate.sql"
		echo "INSERT INTO schema_version VALUES (1, 0);"
	} | sqlite3 "$T/v1.sqlite"
	"$KW" estate ingest --create --db "sqlite:$T/v1.sqlite" --trust "$T/trust" "$T/hosts/alpha" >/dev/null
	expect_eq "migration: a version 1 database is at the newest version, each applied once" \
		"1|2|3|4|5|6" "$(sqlite3 "$T/v1.sqlite" 'SELECT version FROM schema_version ORDER BY version' | paste -sd'|')"
	expect_eq "migration: the new column is there and the records went in" "2 2" \
		"$(sqlite3 "$T/v1.sqlite" "SELECT count(*), sum(appraisal = '') FROM records" | tr '|' ' ')"
	# Migration 6 on a database that holds entries: as version 5 left it
	# (full indexes on addr, port and host), its indexes become partial and
	# the queries on them find the same rows.
	port=$(sqlite3 "$T/v1.sqlite" "SELECT port FROM entries WHERE port IS NOT NULL LIMIT 1")
	q_addr() { "$KW" estate query --db "sqlite:$T/v1.sqlite" --object 10.128.0.0/9 --count; }
	q_port() { "$KW" estate query --db "sqlite:$T/v1.sqlite" --object "$port" --count; }
	want_addr=$(q_addr) want_port=$(q_port)
	sqlite3 "$T/v1.sqlite" "DROP INDEX entries_addr; DROP INDEX entries_port; DROP INDEX entries_host;
		CREATE INDEX entries_addr ON entries (addr); CREATE INDEX entries_port ON entries (port);
		CREATE INDEX entries_host ON entries (host); DELETE FROM schema_version WHERE version = 6"
	got_addr=$(q_addr) got_port=$(q_port)
	expect_eq "migration 6: a version 5 database with entries is at version 6" 6 \
		"$(sqlite3 "$T/v1.sqlite" 'SELECT max(version) FROM schema_version')"
	expect_eq "migration 6: the addr, port and host indexes hold only rows with one" 3 \
		"$(sqlite3 "$T/v1.sqlite" "SELECT count(*) FROM sqlite_master WHERE name IN
			('entries_addr', 'entries_port', 'entries_host') AND sql LIKE '%WHERE % IS NOT NULL'")"
	expect_eq "migration 6: the same rows by address and by port ($want_addr, $want_port)" \
		"$want_addr $want_port" "$got_addr $got_port"
	check "migration 6: the address query uses its index" grep -q "INDEX entries_addr" \
		<<<"$(sqlite3 "$T/v1.sqlite" "EXPLAIN QUERY PLAN SELECT count(*) FROM entries e WHERE e.addr >= '0' AND e.addr <= '1'")"
	sqlite3 "$T/v1.sqlite" "INSERT INTO schema_version VALUES (99, 0)"
	bad_newer=$("$KW" estate query --db "sqlite:$T/v1.sqlite" --count 2>&1)
	expect_eq "migration: a database newer than the program is refused" \
		"kwitness estate query: the database has schema version 99, newer than this kwitness knows (6)" "$bad_newer"
else
	not_ok "sqlite3 missing (scripts/deps.sh installs it)"
fi

# Bad input: one line on stderr, exit 2.
bad() { # NAME WANT-IN-MESSAGE ARGS...
	local name=$1 want=$2 err rc
	shift 2
	err=$("$KW" "$@" 2>&1 >/dev/null); rc=$?
	if [ $rc -eq 2 ] && [ "$(grep -c . <<<"$err")" -eq 1 ] && grep -qF -- "$want" <<<"$err"; then
		ok "bad input: $name"
	else
		not_ok "bad input: $name (exit $rc)"
		sed 's/^/#   /' <<<"$err" | head -3
	fi
}
mkdir -p "$T/badtrust" && echo 'not a key' >"$T/badtrust/x.jwk"
bad "unknown database URL" "unknown database URL" estate query --db mysql://x
bad "no PATH" "give at least one PATH" estate ingest --create --db "$DB" --trust "$T/trust"
bad "missing trust folder" "cannot open the trust folder" estate ingest --create --db "$DB" --trust "$T/none" "$T/hosts"
bad "a trust file that is no key" "is not a public key" estate ingest --create --db "$DB" --trust "$T/badtrust" "$T/hosts"
bad "--decision maybe" "permit or deny" estate query --db "$DB" --decision maybe
bad "--object 10.0.0.0/99" "not an address range" estate query --db "$DB" --object 10.0.0.0/99
bad "--since yesterday" "--since" estate query --db "$DB" --since yesterday
bad "--group-by color" "host, sandbox or tool" estate query --db "$DB" --group-by color
bad "a database file that is not SQLite" "file is not a database" estate query --db "sqlite:$T/bundle"
bad "report without --log" "give one RECORD" report "$T/x.json"
bad "estate report without --session" "--session ID is required" estate report --db "$DB" --trust "$T/trust"
bad "estate report of an unknown session" "no stored record" estate report --db "$DB" --trust "$T/trust" --session 00
for h in "estate --help" "estate ingest --help" "estate query --help" "estate report --help" "report --help"; do
	# shellcheck disable=SC2086
	"$KW" $h | grep -q '^usage: '
	expect_eq "$h: usage on stdout, exit 0" "0 0" "${PIPESTATUS[*]}"
done
finish
