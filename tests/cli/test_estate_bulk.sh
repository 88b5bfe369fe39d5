#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# estate ingest's bulk path (user/estate/bulk.h): into an empty database the
# entries indexes are dropped and built after the load. What is stored and
# what is refused (with which reason) must equal an ingest of the same
# folders with the indexes on (a database that already held entries), and
# the indexes must be there after it; a run that stopped with them dropped
# is repaired by the next ingest.
source "$(dirname "$0")/../lib.sh"

LOGGEN=$KW_BUILD/tests/kw-loggen
if [ ! -x "$KW" ] || [ ! -x "$LOGGEN" ] || ! command -v sqlite3 >/dev/null; then
	not_ok "kwitness, kw-loggen or sqlite3 missing"
	finish
fi
T=$(mktemp -d /tmp/kw-estate-bulk.XXXXXX)
trap 'rm -rf "$T"' EXIT
printf '{"kwitness_policy":1,"mode":"enforce","net":{"connect":["10.0.0.0/8:443"]}}\n' >"$T/bundle"
BH=$(sha256sum "$T/bundle" | cut -c1-64)
IMAGE=sha256:$(printf 'a%.0s' $(seq 64))
. "$KW_ROOT/tests/cli/estate_lib.sh"
session() { estate_session "$1" "$2" "$3" estate_sign_plain "${@:4}"; }
session alpha 400 1 >/dev/null
session alpha 300 2 >/dev/null
TAMPERED=$(session alpha 300 3)
session beta 500 4 >/dev/null
session beta 200 5 --gap-every 10 >/dev/null
# One bad record among the good ones: a decision changed after signing.
sed -i '5s/"comm":"kw-netprobe"/"comm":"kw-netprobX"/' "$T/hosts/alpha/logs/$TAMPERED.jsonl"
check "the tampered line is there" grep -q kw-netprobX "$T/hosts/alpha/logs/$TAMPERED.jsonl"
# ...and one whose signer the estate does not trust.
session gamma 100 6 >/dev/null
rm "$T/trust/gamma.jwk"
# The lines of the four good sessions' logs.
GOOD=$(cat "$T"/hosts/beta/logs/*.jsonl | wc -l)
GOOD=$((GOOD + $(grep -L kw-netprobX "$T"/hosts/alpha/logs/*.jsonl | xargs cat | wc -l)))

indexes() { sqlite3 "$1" "SELECT name FROM sqlite_master WHERE type = 'index' ORDER BY name" | paste -sd' '; }
# What a database holds, without its surrogate ids.
contents() {
	sqlite3 "$1" "SELECT r.session, e.line, e.seq, e.ts_us, e.tool, e.decision, e.enforced, e.object,
		e.host, e.addr, e.port, e.path, e.rule, e.pid, e.uid, e.comm, e.entry
		FROM entries e JOIN records r ON r.id = e.record_id ORDER BY r.session, e.line" | sha256sum
	sqlite3 "$1" "SELECT session, record_digest, hostname, decisions, denials, complete FROM records
		ORDER BY session"
	sqlite3 "$1" "SELECT path, session, reason FROM rejected ORDER BY path, reason"
}

# Bulk: an empty database.
"$KW" estate ingest --quiet --create --db "sqlite:$T/bulk.sqlite" --trust "$T/trust" "$T/hosts" >/dev/null
rc=$?
expect_eq "bulk ingest: exit 1 (records refused)" 1 "$rc"
# Row by row: the database already holds a record's entries first.
"$KW" estate ingest --quiet --create --db "sqlite:$T/rows.sqlite" --trust "$T/trust" \
	"$T/hosts/beta/records/$(ls "$T/hosts/beta/records" | head -1)" >/dev/null
"$KW" estate ingest --quiet --db "sqlite:$T/rows.sqlite" --trust "$T/trust" "$T/hosts" >/dev/null
expect_eq "the row-by-row ingest stored what the bulk one did, refused the same with the same reasons" \
	"$(contents "$T/rows.sqlite")" "$(contents "$T/bulk.sqlite")"
expect_eq "the tampered log and the untrusted signer are refused, for their reasons" \
	"transcript_mismatch trusted_key_missing" \
	"$(sqlite3 "$T/bulk.sqlite" "SELECT reason FROM rejected ORDER BY reason" | paste -sd' ')"
expect_eq "every line of the four good sessions' logs is stored" "$GOOD" \
	"$(sqlite3 "$T/bulk.sqlite" "SELECT count(*) FROM entries")"
sqlite3 "$T/fresh.sqlite" 'SELECT 1' >/dev/null
"$KW" estate init --db "sqlite:$T/fresh.sqlite" >/dev/null
ALL=$(indexes "$T/fresh.sqlite")
check "the fresh schema has the entries indexes" grep -q "entries_addr" <<<"$ALL"
expect_eq "after the bulk ingest every index of the schema is there" "$ALL" "$(indexes "$T/bulk.sqlite")"
expect_eq "who did this: the same answer from both" \
	"$("$KW" estate query --db "sqlite:$T/rows.sqlite" --decision deny --object 10.0.0.0/8 --count)" \
	"$("$KW" estate query --db "sqlite:$T/bulk.sqlite" --decision deny --object 10.0.0.0/8 --count)"

# SQLite loads with a rollback journal (bulk.h) and goes back to WAL after.
expect_eq "after the bulk ingest the database is in WAL mode again" "wal ok" \
	"$(sqlite3 "$T/bulk.sqlite" "PRAGMA journal_mode; PRAGMA integrity_check" | paste -sd' ')"

# Killed during the load, at a few points: the file stays sound, no session
# is stored in part, and the next ingest stores the rest (two batches of
# entries: one may be committed, the other rolled back).
K_SIDS=$(for s in 1 2 3 4 5 6 7 8; do session delta 10000 "$((40 + s))"; done)
mkdir -p "$T/kill"
mv "$T/hosts/delta" "$T/kill/"
for n in 1 2 3; do
	K=$T/killed$n
	mkdir -p "$K/hosts"
	cp -r "$T/kill/delta" "$K/hosts/"
	"$KW" estate ingest --quiet --create --db "sqlite:$K/db.sqlite" --trust "$T/trust" "$K/hosts" \
		>/dev/null 2>&1 &
	pid=$!
	sleep "0.$((n * 3 - 1))"
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	hot=$([ -s "$K/db.sqlite-journal" ] && echo "a journal left, " || true)
	echo "# killed after 0.$((n * 3 - 1)) s: $hot$(sqlite3 "$K/db.sqlite" "SELECT count(*) FROM records") of 8 stored"
	expect_eq "killed load $n: the file is sound" ok "$(sqlite3 "$K/db.sqlite" "PRAGMA integrity_check")"
	partial=$(for sid in $K_SIDS; do
		got=$(sqlite3 "$K/db.sqlite" "SELECT count(*) FROM entries e JOIN records r
			ON r.id = e.record_id WHERE r.session = '$sid'")
		[ "$got" = 0 ] || [ "$got" = "$(wc -l <"$K/hosts/delta/logs/$sid.jsonl")" ] || echo "$sid $got"
	done)
	expect_eq "killed load $n: every session stored whole or not at all" "" "$partial"
	expect_eq "killed load $n: no entry without its record" 0 "$(sqlite3 "$K/db.sqlite" \
		"SELECT count(*) FROM entries WHERE record_id NOT IN (SELECT id FROM records)")"
	"$KW" estate ingest --quiet --db "sqlite:$K/db.sqlite" --trust "$T/trust" "$K/hosts" >/dev/null
	expect_eq "killed load $n: the next ingest stores every line, in WAL mode, its indexes built" \
		"$(cat "$K"/hosts/delta/logs/*.jsonl | wc -l) wal $ALL" \
		"$(sqlite3 "$K/db.sqlite" "SELECT count(*) FROM entries; PRAGMA journal_mode" | paste -sd' ') $(indexes "$K/db.sqlite")"
done

# A run that stopped with its indexes dropped: the next ingest builds them.
sqlite3 "$T/bulk.sqlite" "DROP INDEX entries_addr; DROP INDEX entries_ts"
"$KW" estate ingest --quiet --db "sqlite:$T/bulk.sqlite" --trust "$T/trust" "$T/hosts/beta" >/dev/null
expect_eq "a stopped run's missing indexes are built by the next ingest" "$ALL" "$(indexes "$T/bulk.sqlite")"
expect_eq "...and it added nothing twice" "$GOOD" "$(sqlite3 "$T/bulk.sqlite" "SELECT count(*) FROM entries")"
finish
