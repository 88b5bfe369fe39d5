#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# estate ingest's first load into PostgreSQL (user/estate/pg_bulk.h): into
# an empty entries table the run is one transaction, its constraints and
# indexes dropped and made again before the commit. What it stores and
# refuses must equal a row-by-row ingest of the same folders (a database
# that already held entries); the entries table must have every constraint
# and index of a fresh schema after it; and a run that fails before its end
# stores nothing and leaves that schema as it was.
source "$(dirname "$0")/../lib.sh"
. "$KW_ROOT/tests/kernel/pg_lib.sh"

LOGGEN=$KW_BUILD/tests/kw-loggen
if [ ! -x "$KW" ] || [ ! -x "$LOGGEN" ]; then
	not_ok "kwitness or kw-loggen missing"
	finish
fi
if [ "$(id -u)" -ne 0 ]; then
	skip "PostgreSQL: pg_lib.sh runs a private server as user nobody, which needs root"
	finish
fi
T=$(mktemp -d /tmp/kw-estate-bulk-pg.XXXXXX)
trap 'pg_cleanup; rm -rf "$T"' EXIT
printf '{"kwitness_policy":1,"mode":"enforce","net":{"connect":["10.0.0.0/8:443"]}}\n' >"$T/bundle"
BH=$(sha256sum "$T/bundle" | cut -c1-64)
IMAGE=sha256:$(printf 'a%.0s' $(seq 64))
. "$KW_ROOT/tests/cli/estate_lib.sh"
session() { estate_session "$1" "$2" "$3" estate_sign_plain "${@:4}"; }
session alpha 400 1 >/dev/null
TAMPERED=$(session alpha 300 2)
session beta 500 3 >/dev/null
session beta 200 4 --gap-every 10 >/dev/null
sed -i '5s/"comm":"kw-netprobe"/"comm":"kw-netprobX"/' "$T/hosts/alpha/logs/$TAMPERED.jsonl"
check "the tampered line is there" grep -q kw-netprobX "$T/hosts/alpha/logs/$TAMPERED.jsonl"
GOOD=$(grep -L kw-netprobX "$T"/hosts/*/logs/*.jsonl | xargs cat | wc -l)

if ! pg_init; then
	not_ok "PostgreSQL: the private server could not be started"
	finish
fi
for d in fresh rows; do "$PG_BIN/createdb" -h "$PG_TMP" -U kwitness "$d"; done
url() { echo "postgresql:///$1?host=$PG_TMP&user=kwitness"; }
q() { "$PG_BIN/psql" -X -q -A -t -h "$PG_TMP" -U kwitness -d "$1" -c "$2"; }
# The entries table's constraints (validated, deferred) and indexes.
schema() {
	q "$1" "SELECT conname, pg_get_constraintdef(oid), convalidated, condeferred FROM pg_constraint
		WHERE conrelid = 'entries'::regclass ORDER BY conname"
	q "$1" "SELECT indexdef FROM pg_indexes WHERE tablename = 'entries' ORDER BY indexname"
}
contents() {
	q "$1" "SELECT r.session, e.line, e.seq, e.ts_us, e.tool, e.decision, e.enforced, e.object,
		e.host, e.addr, e.port, e.path, e.rule, e.pid, e.uid, e.comm, e.entry
		FROM entries e JOIN records r ON r.id = e.record_id ORDER BY r.session, e.line" | sha256sum
	q "$1" "SELECT session, record_digest, hostname, decisions, denials, complete FROM records
		ORDER BY session"
	q "$1" "SELECT path, session, reason FROM rejected ORDER BY path, reason"
}
"$KW" estate init --db "$(url fresh)" >/dev/null
FRESH=$(schema fresh)
check "the fresh schema has the primary key, the reference to records and the indexes" \
	grep -q "entries_record_id_fkey.*DEFERRABLE INITIALLY DEFERRED|t|t" <<<"$FRESH"
check "...the addr index" grep -q "entries_addr" <<<"$FRESH"

# A first load that fails before its end (a path that is not there, after
# one that ingests): nothing of it is stored, the schema is as it was.
"$KW" estate ingest --quiet --create --db "$PGURL" --trust "$T/trust" "$T/hosts/beta" \
	"$T/not-there" >/dev/null 2>"$T/err"
rc=$?
expect_eq "a failed first load: exit 2" 2 "$rc"
check "...saying why" grep -q "not-there" "$T/err"
expect_eq "...nothing of it is stored (entries, records, rejected)" "0 0 0" \
	"$(q estate "SELECT (SELECT count(*) FROM entries), (SELECT count(*) FROM records),
		(SELECT count(*) FROM rejected)" | tr '|' ' ')"
expect_eq "...the entries table keeps every constraint and index" "$FRESH" "$(schema estate)"

# The first load, whole.
"$KW" estate ingest --quiet --db "$PGURL" --trust "$T/trust" "$T/hosts" >/dev/null
rc=$?
expect_eq "first load: exit 1 (the tampered record refused)" 1 "$rc"
expect_eq "...every line of the three good sessions is stored" "$GOOD" \
	"$(q estate "SELECT count(*) FROM entries")"
expect_eq "...the entries table has every constraint and index of the fresh schema" \
	"$FRESH" "$(schema estate)"
# Row by row: the database holds a record's entries first.
"$KW" estate ingest --quiet --create --db "$(url rows)" --trust "$T/trust" \
	"$T/hosts/beta/records/$(ls "$T/hosts/beta/records" | head -1)" >/dev/null
"$KW" estate ingest --quiet --db "$(url rows)" --trust "$T/trust" "$T/hosts" >/dev/null
expect_eq "the row-by-row ingest stored and refused what the first load did" \
	"$(contents rows)" "$(contents estate)"
expect_eq "who did this: the same answer from both" \
	"$("$KW" estate query --db "$(url rows)" --decision deny --object 10.0.0.0/8 --count)" \
	"$("$KW" estate query --db "$PGURL" --decision deny --object 10.0.0.0/8 --count)"
# Again: nothing new, the table not empty (no first load).
"$KW" estate ingest --quiet --db "$PGURL" --trust "$T/trust" "$T/hosts" >/dev/null
expect_eq "a second ingest adds nothing" "$GOOD" "$(q estate "SELECT count(*) FROM entries")"
expect_eq "...and keeps the schema" "$FRESH" "$(schema estate)"
finish
