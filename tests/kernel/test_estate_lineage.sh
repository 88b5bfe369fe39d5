#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Lineage in the estate (docs/estate.md, "Which process"): one session runs
# a tree whose middle shell carries a marker in its argv, with two connects
# below it (one a grandchild) and two outside it. Its record goes into
# SQLite and into a private PostgreSQL server; on both, estate query
# --ancestor MARKER selects exactly the decisions of that shell's subtree as
# kwitness log tree and the estate report's tree count them (and the ports
# the test knows were connected below it), --exe selects by program,
# --digest by the kernel's SHA-256 of the file (where exec is governed:
# BPF-LSM) and a pattern nobody ran selects nothing.
# estate verify derives the procs rows again: the ingested ones hold, a row
# changed or removed afterwards is named. On PostgreSQL the host's push role
# (estate roles) ingests, its procs rows under row-level security.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kwd_lib.sh"
. "$(dirname "$0")/pg_lib.sh"

kwd_require
command -v sqlite3 >/dev/null || kt_fail_all "sqlite3 missing (scripts/deps.sh)"
cleanup_all() {
	pg_cleanup
	kwd_cleanup
}
trap cleanup_all EXIT
kwd_start
kwd_has_hook net.connect || kt_skip_all "net.connect hooks unavailable on this kernel"

# exec governed where the kernel can hash what runs: exec entries then
# carry the file's digest
EXEC=
kwd_has_hook exec.digest && EXEC=',"exec":{"allow":["/"]}'
if ! policy_session estlin enforce deny "\"net\":{\"connect\":[\"127.0.0.1/32:1\"]}$EXEC"; then
	not_ok "session opens"
	finish
fi
MARK=kw-mark-$$
# root sh: a connect of its own (port 5), the marked shell (ports 2, 3: a
# child, and a grandchild through another shell), then a sibling (port 4).
# (The root's argv holds the marker in two pieces: only the marked shell's
# holds it whole.)
cg_run "$cg" sh -c '
	NP=$0; M=$1-$2
	"$NP" connect 127.0.0.1 5
	sh -c "\"$NP\" connect 127.0.0.1 2; sh -c \"exec $NP connect 127.0.0.1 3\"; true" "$M"
	sh -c "exec $NP connect 127.0.0.1 4"' "$NP" kw-mark $$ >/dev/null
session_close "$sid" >"$KT_TMP/close.out" || { not_ok "session closes"; cat "$KT_TMP/close.out"; finish; }
check "the record verifies" verify_record

# subtree_decisions TREE: the decisions of the first process whose line
# holds the marker and of every line indented below it
subtree_decisions() {
	awk -v m="$MARK" '
		function indent(s) { match(s, /^ */); return RLENGTH }
		!in_sub && index($0, m) { in_sub = 1; d = indent($0) }
		in_sub && NR > 0 {
			if (started && indent($0) <= d) exit
			started = 1
			if (match($0, / decisions=[0-9]+ /)) n += substr($0, RSTART + 11, RLENGTH - 12)
		}
		END { print n + 0 }' "$1"
}
"$KW" log tree "$LOG" >"$KT_TMP/tree.out"
sed 's/^/# /' "$KT_TMP/tree.out"
want=$(subtree_decisions "$KT_TMP/tree.out")
# the 2 connects below it, and the exec decisions there when exec is governed
if [ -n "$EXEC" ]; then
	check "kwitness log tree: the marked shell's subtree made its 2 connects and execs ($want)" \
		test "$want" -gt 2
else
	expect_eq "kwitness log tree: the marked shell's subtree made the 2 connects below it" 2 "$want"
fi
connects=$(grep -c '"tool":"net.connect"' "$LOG")
expect_eq "the log holds the 4 connects" 4 "$connects"

mkdir -p "$KT_TMP/trust" "$KT_TMP/hosts"
cp "$KT_TMP/signer.jwk" "$KT_TMP/trust/host.jwk"

# suite LABEL URL DBQ [PUSH_URL]: PUSH_URL (a push role's) ingests when given
suite() {
	local L=$1 URL=$2 DBQ=$3 out
	out=$("$KW" estate ingest --create --db "${4:-$URL}" --trust "$KT_TMP/trust" "$KT_TMP/state" 2>&1)
	check "$L: the record is stored" grep -q '^summary: 1 records: 1 stored' <<<"$out" ||
		sed 's/^/# /' <<<"$out"
	expect_eq "$L: schema version 6" 6 "$($DBQ 'SELECT max(version) FROM schema_version')"
	expect_eq "$L: one procs row per proc entry" "$(grep -c '"tool":"proc"' "$LOG")" \
		"$($DBQ 'SELECT count(*) FROM procs')"
	expect_eq "$L: estate query --ancestor counts what kwitness log tree counts" "$want" \
		"$("$KW" estate query --db "$URL" --ancestor "$MARK" --count)"
	expect_eq "$L: --ancestor: the connects below the marked shell, not beside it" \
		"127.0.0.1:2/tcp 127.0.0.1:3/tcp" \
		"$("$KW" estate query --db "$URL" --ancestor "$MARK" --tool net.connect --json |
			jq -r .object | sort | paste -sd' ')"
	"$KW" estate report --db "$URL" --trust "$KT_TMP/trust" --session "$sid" \
		--html "$KT_TMP/db-$L.html" >/dev/null
	sed -n '/<pre id="proctree">/,/<\/pre>/p' "$KT_TMP/db-$L.html" | sed '1s/.*<pre id="proctree">//' \
		>"$KT_TMP/db-$L.tree"
	expect_eq "$L: the estate report's tree counts the same subtree" "$want" \
		"$(subtree_decisions "$KT_TMP/db-$L.tree")"
	expect_eq "$L: --ancestor with a text no program ran: none" 0 \
		"$("$KW" estate query --db "$URL" --ancestor "no-such-$$" --count)"
	expect_eq "$L: --exe: every connect ran kw-netprobe" "$connects" \
		"$("$KW" estate query --db "$URL" --exe "$NP" --tool net.connect --count)"
	expect_eq "$L: --exe /bin/sh: no connect" 0 \
		"$("$KW" estate query --db "$URL" --exe /bin/sh --tool net.connect --count)"
	expect_eq "$L: --ancestor MARKER --exe: both filters hold" 2 \
		"$("$KW" estate query --db "$URL" --ancestor "$MARK" --exe "$NP" --tool net.connect --count)"
	if [ -n "$EXEC" ]; then
		expect_eq "$L: --digest (sha256sum of kw-netprobe): every connect" "$connects" \
			"$("$KW" estate query --db "$URL" --digest "sha256:$(sha256sum "$NP" | cut -d' ' -f1)" --tool net.connect --count)"
		expect_eq "$L: --digest of another file (sh): no connect" 0 \
			"$("$KW" estate query --db "$URL" --digest "sha256:$(sha256sum "$(readlink -f "$(command -v sh)")" | cut -d' ' -f1)" --tool net.connect --count)"
	else
		skip_feature exec.digest "--digest: the kernel does not hash executed files here"
	fi
	procs_forgery "$L" "$URL" "$DBQ"
}

# procs_forgery LABEL URL DBQ: estate verify derives the procs rows again
# from the entries; a row changed or removed afterwards is named (exit 1).
procs_forgery() {
	local L=$1 URL=$2 DBQ=$3 out rc line
	out=$("$KW" estate verify --db "$URL" --trust "$KT_TMP/trust"); rc=$?
	expect_eq "$L: estate verify: the ingested procs rows hold" \
		"0 summary: 1 records re-derived: 1 hold, 0 tampered" "$rc $out"
	line=$($DBQ "SELECT min(line) FROM procs WHERE exe IS NOT NULL")
	$DBQ "UPDATE procs SET exe = '/usr/bin/curl' WHERE line = $line" >/dev/null
	out=$("$KW" estate verify --db "$URL" --trust "$KT_TMP/trust"); rc=$?
	expect_eq "$L: a procs row's exe changed: estate verify exits 1, altered, naming its entry" "1 1" \
		"$rc $(grep -c "^tampered: session $sid (record [0-9]*): procs: the row of entry $line is altered (its exe " <<<"$out")"
	$DBQ "DELETE FROM procs WHERE line = $line" >/dev/null
	out=$("$KW" estate verify --db "$URL" --trust "$KT_TMP/trust"); rc=$?
	expect_eq "$L: a procs row removed: estate verify exits 1, missing, naming its entry" "1 1" \
		"$rc $(grep -c "^tampered: session $sid (record [0-9]*): procs: the row of entry $line is missing" <<<"$out")"
}

DB=$KT_TMP/estate.sqlite
sqlite_q() { sqlite3 -batch -noheader "$DB" "$1"; }
suite sqlite "sqlite:$DB" sqlite_q

if ! pg_init; then
	not_ok "postgresql: a private cluster (initdb, pg_ctl) starts"
	finish
fi
# the host's push role (estate roles) stores the record and its procs rows,
# under the row-level security that keeps them to its own signer's records
"$KW" estate query --db "$PGURL" --count >/dev/null 2>&1 # the schema, made by the administrator
"$KW" estate roles --trust "$KT_TMP/trust" --db "$PGURL" --apply >/dev/null
suite postgresql "$PGURL" pg_q "postgresql:///estate?host=$PG_TMP&user=kwitness_push_host"
check "kwitnessd is still running" kwd_alive
finish
