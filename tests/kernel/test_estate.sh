#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kwitness estate: records of real kwitnessd sessions from three fake hosts
# (each collector in its own UTS and mount namespace, with its own hostname,
# machine id and signing key) go into SQLite and into a real PostgreSQL
# server (a private cluster made here with initdb, on a Unix socket, run as
# an unprivileged user). Then: the one denied connect names the right
# sandbox, host and signer; a tampered log, a tampered record and an
# untrusted key land in rejected with their codes; re-ingesting changes no
# row count; the incomplete session is found by --incomplete; the entries
# reproduce the signed transcript hash.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kwd_lib.sh"
. "$(dirname "$0")/pg_lib.sh"

kwd_require
command -v sqlite3 >/dev/null || kt_fail_all "sqlite3 missing (scripts/deps.sh)"
command -v unshare >/dev/null || kt_fail_all "unshare missing (util-linux)"
cleanup_all() {
	pg_cleanup
	kwd_cleanup
}
trap cleanup_all EXIT

# --- hosts ------------------------------------------------------------------

# host_start NAME: kwitnessd with hostname NAME, a machine id of its own, key
# $KT_TMP/NAME.pem and state folder $KT_TMP/hosts/NAME.
host_start() {
	local name=$1 mid
	mid=$(printf '%s' "$name-$$" | sha256sum | cut -c1-32)
	printf '%s\n' "$mid" >"$KT_TMP/$name.machine-id"
	[ -f "$KT_TMP/$name.pem" ] || {
		"$KW" keygen --out "$KT_TMP/$name.pem" >/dev/null
		"$KW" key show --key "$KT_TMP/$name.pem" --jwk >"$KT_TMP/$name.jwk"
	}
	KT_SOCK=$KT_TMP/$name.sock
	mkdir -p "$KT_TMP/hosts"
	unshare --mount --uts --propagation private sh -c \
		'hostname "$0" && mount --bind "$1" /etc/machine-id && shift && exec "$@"' \
		"$name" "$KT_TMP/$name.machine-id" \
		"$KWD" --foreground -v --state-dir "$KT_TMP/hosts/$name" --socket "$KT_SOCK" \
		--key "$KT_TMP/$name.pem" --pin-dir none --config /dev/null \
		2>>"$KT_TMP/kwitnessd.log" &
	KT_DPID=$!
	for _ in $(seq 600); do
		[ -S "$KT_SOCK" ] && return 0
		kill -0 "$KT_DPID" 2>/dev/null || break
		sleep 0.1
	done
	sed 's/^/# /' "$KT_TMP/kwitnessd.log" | tail -5
	kt_fail_all "kwitnessd for host $name did not start"
}

HOST_A=estate-a-$$ HOST_B=estate-b-$$ HOST_C=estate-c-$$
SBX=spiffe://test.kwitness.local/estate-$$

host_start "$HOST_A"
kwd_has_hook net.connect || kt_skip_feature net.connect "net.connect hooks unavailable on this kernel"
listeners_start
POL=$(policy_file estate "{\"kwitness_policy\":1,\"mode\":\"enforce\",\"record\":\"all\",\"net\":{\"connect\":[\"127.0.0.1/32:$LPORT_A\"]}}")
# A program whose name (and so its comm) is markup: the sandbox chooses it.
HOSTILE="$KT_TMP/<script>x&'\""
cp "$NP" "$HOSTILE"

# one_session CGROUP SANDBOX CMD...: opens, runs CMD in the cgroup, closes;
# prints the session id.
one_session() {
	local cg sid
	cg=$(cg_make "$1")
	sid=$(session_open "$cg" "$POL" "$2") || return 1
	shift 2
	cg_run "$cg" "$@" >>"$KT_TMP/runs.out"
	session_close "$sid" >/dev/null || return 1
	echo "$sid"
}

# Host A: the one denied connect (agent-a), two sessions that only connect
# where allowed, and two that will be tampered with.
S_DENY=$(one_session a1 "$SBX/agent-a" sh -c "'$NP' connect 127.0.0.1 $LPORT_A; '$NP' connect 127.0.0.1 $LPORT_B")
S_A2=$(one_session a2 "$SBX/agent-a2" "$HOSTILE" connect 127.0.0.1 "$LPORT_A")
S_TLOG=$(one_session a3 "$SBX/tamper-log" "$NP" connect 127.0.0.1 "$LPORT_A")
S_TREC=$(one_session a4 "$SBX/tamper-record" "$NP" connect 127.0.0.1 "$LPORT_A")
kwd_stop
expect_eq "host A: the denied connect was refused (EPERM) and the allowed one went through" \
	"ok EPERM" "$(head -2 "$KT_TMP/runs.out" | tr '\n' ' ' | sed 's/ $//')"

# Host B: a closed session, and one left open when its collector is killed
# (the next collector seals it: incomplete).
host_start "$HOST_B"
S_B1=$(one_session b1 "$SBX/agent-b" "$NP" connect 127.0.0.1 "$LPORT_A")
cgk=$(cg_make bk)
S_KILLED=$(session_open "$cgk" "$POL" "$SBX/agent-b-killed")
cg_run "$cgk" "$NP" connect 127.0.0.1 "$LPORT_A" >/dev/null
for _ in $(seq 100); do
	[ "$(decisions "$KT_TMP/hosts/$HOST_B/logs/$S_KILLED.jsonl" 2>/dev/null | grep -c .)" -ge 1 ] && break
	sleep 0.1
done
{ kill -KILL "$KT_DPID" && wait "$KT_DPID"; } 2>/dev/null
KT_DPID=
rm -f "$KT_SOCK"
host_start "$HOST_B"
kwd_stop
check "host B: the killed collector's session was sealed into a record" \
	test -s "$KT_TMP/hosts/$HOST_B/records/$S_KILLED.json"

# Host C: signs with a key the estate does not trust.
host_start "$HOST_C"
S_C1=$(one_session c1 "$SBX/agent-c" "$NP" connect 127.0.0.1 "$LPORT_A")
kwd_stop

for s in S_DENY S_A2 S_TLOG S_TREC S_B1 S_KILLED S_C1; do
	[ -n "${!s}" ] || kt_fail_all "session $s did not open or close"
done

# The tampered copies live in a host folder of their own.
HA=$KT_TMP/hosts/$HOST_A T=$KT_TMP/hosts/tampered-$$
mkdir -p "$T/records" "$T/logs" "$T/policies"
cp "$HA"/policies/* "$T/policies/"
mv "$HA/records/$S_TLOG.json" "$HA/records/$S_TREC.json" "$T/records/"
mv "$HA/logs/$S_TLOG.jsonl" "$HA/logs/$S_TREC.jsonl" "$T/logs/"
# the log: the decision's port changed (canonical still, the counts agree)
sed -i "s/\"port\":$LPORT_A,/\"port\":$((LPORT_A + 1)),/" "$T/logs/$S_TLOG.jsonl"
# the record: another subject
sed -i 's#tamper-record#innocent-one#' "$T/records/$S_TREC.json"

mkdir -p "$KT_TMP/trust"
cp "$KT_TMP/$HOST_A.jwk" "$KT_TMP/$HOST_B.jwk" "$KT_TMP/trust/"
TP_A=$("$KW" key show --key "$KT_TMP/$HOST_A.pem" | sed -n 's/^thumbprint: *//p')
MID_A=$(cat "$KT_TMP/$HOST_A.machine-id")

# --- the suite, once per engine ---------------------------------------------

# jq over one JSON object per line.
jcol() { jq -r "$1" 2>/dev/null; }

# suite LABEL URL DBQ: DBQ SQL prints the rows of SQL (an independent client).
suite() {
	local L=$1 URL=$2 DBQ=$3 out rc before after n

	out=$("$KW" estate ingest --create --db "$URL" --trust "$KT_TMP/trust" "$KT_TMP/hosts" 2>&1); rc=$?
	expect_eq "$L: ingest exits 1 (some records rejected)" 1 "$rc"
	check "$L: summary: 7 records, 4 stored (1 incomplete), 3 rejected" \
		grep -q '^summary: 7 records: 4 stored (1 incomplete, 0 at level 1), 0 already stored, 3 rejected' <<<"$out"
	[ "$rc" -eq 1 ] || sed 's/^/# /' <<<"$out"

	out=$("$KW" estate query --db "$URL" --tool net.connect --decision deny --json)
	expect_eq "$L: exactly one denied connect" 1 "$(grep -c . <<<"$out")"
	expect_eq "$L: its sandbox, host, machine id, signer and session" \
		"$SBX/agent-a $HOST_A $MID_A $TP_A $S_DENY" \
		"$(jcol '[.sandbox_id, .host, .machine_id, .signer, .session] | join(" ")' <<<"$out")"
	expect_eq "$L: its object, enforcement, mode and level" \
		"127.0.0.1:$LPORT_B/tcp true enforce 0" \
		"$(jcol '[.object, .enforced, .enforcement_mode, .level] | map(tostring) | join(" ")' <<<"$out")"
	expect_eq "$L: its record path" "$HA/records/$S_DENY.json" "$(jcol .record <<<"$out")"
	expect_eq "$L: the same row by CIDR, port and host filters" "1 1 1" \
		"$("$KW" estate query --db "$URL" --decision deny --object 127.0.0.0/8 --count) $("$KW" estate query --db "$URL" --decision deny --object "$LPORT_B" --count) $("$KW" estate query --db "$URL" --decision deny --host "$MID_A" --count)"
	expect_eq "$L: a CIDR that excludes it, another signer: none" "0 0" \
		"$("$KW" estate query --db "$URL" --decision deny --object 10.0.0.0/8 --count) $("$KW" estate query --db "$URL" --decision deny --signer nobody --count)"

	expect_eq "$L: rejected: the tampered log, the tampered record, the untrusted key" \
		"$S_TREC signature_invalid|$S_TLOG transcript_mismatch|$S_C1 trusted_key_missing" \
		"$($DBQ "SELECT session || ' ' || reason FROM rejected ORDER BY reason" | paste -sd'|')"
	expect_eq "$L: nothing of a rejected record is stored" 0 \
		"$($DBQ "SELECT count(*) FROM records WHERE session IN ('$S_TREC', '$S_TLOG', '$S_C1')")"

	count_rows() {
		$DBQ "SELECT (SELECT count(*) FROM records) || ' ' || (SELECT count(*) FROM entries) || ' ' || (SELECT count(*) FROM policies) || ' ' || (SELECT count(*) FROM rejected)"
	}
	before=$(count_rows)
	out=$("$KW" estate ingest --create --db "$URL" --trust "$KT_TMP/trust" "$KT_TMP/hosts" 2>&1)
	after=$(count_rows)
	expect_eq "$L: re-ingest changes no row count" "$before" "$after"
	check "$L: re-ingest: 4 already stored" grep -q '4 already stored' <<<"$out"
	n=$(cat "$HA/logs/$S_DENY.jsonl" "$HA/logs/$S_A2.jsonl" "$KT_TMP/hosts/$HOST_B/logs/$S_B1.jsonl" \
		"$KT_TMP/hosts/$HOST_B/logs/$S_KILLED.jsonl" | grep -c .)
	expect_eq "$L: every line of the stored logs is an entry" "4 $n 1 3" "$after"

	out=$("$KW" estate query --db "$URL" --incomplete --json)
	expect_eq "$L: --incomplete finds the killed collector's session only" "$S_KILLED $HOST_B" \
		"$(jcol '[.session, .host] | join(" ")' <<<"$out" | sort -u | paste -sd'|')"

	# The entries, joined as the transcript, hash to the signed value.
	local id hash want
	id=$($DBQ "SELECT id FROM records WHERE session = '$S_A2'")
	hash=$( { printf '['; $DBQ "SELECT entry FROM entries WHERE record_id = $id ORDER BY line" |
		paste -sd, | tr -d '\n'; printf ']'; } | sha256sum | cut -d' ' -f1)
	want=$(jq -r .tool_transcript.hash "$HA/records/$S_A2.json")
	expect_eq "$L: the stored entries reproduce the record's transcript hash" "$want" "sha256:$hash"
	expect_eq "$L: the hostile comm is stored as the sandbox wrote it" "<script>x&'\"" \
		"$($DBQ "SELECT DISTINCT comm FROM entries WHERE record_id = $id AND comm IS NOT NULL")"

	out=$("$KW" estate query --db "$URL" --group-by host --json)
	expect_eq "$L: --group-by host: decisions per host" \
		"$HOST_A $(cat "$HA/logs/$S_DENY.jsonl" "$HA/logs/$S_A2.jsonl" | decisions /dev/stdin | grep -c .)|$HOST_B $(cat "$KT_TMP/hosts/$HOST_B/logs/"{$S_B1,$S_KILLED}.jsonl | decisions /dev/stdin | grep -c .)" \
		"$(jcol '[.hostname, .decisions] | map(tostring) | join(" ")' <<<"$out" | sort | paste -sd'|')"
	out=$("$KW" estate query --db "$URL" --tool net.connect --decision deny --wide)
	check "$L: the table: a header, then the row" \
		test "$(head -1 <<<"$out" | tr -s ' ')" = "TIME HOST MACHINE SANDBOX SESSION TOOL OBJECT DECISION ENFORCED BUNDLE MODE SIGNER LEVEL LOG_INDEX RECORD COMPLETE LEVEL_WHY NAMESPACE POD CONTAINER" -a \
		"$(sed -n 2p <<<"$out" | tr -s ' ' | cut -d' ' -f2-9)" = "$HOST_A $MID_A $SBX/agent-a $S_DENY net.connect 127.0.0.1:$LPORT_B/tcp deny yes"
	expect_eq "$L: --object as the table prints it (127.0.0.1:PORT/tcp) finds those rows" \
		"$("$KW" estate query --db "$URL" --tool net.connect --decision deny --count)" \
		"$("$KW" estate query --db "$URL" --tool net.connect --decision deny --object "127.0.0.1:$LPORT_B/tcp" --count)"
	"$KW" estate query --db "$URL" --tool no.such.tool >/dev/null
	expect_eq "$L: a query without rows exits 1" 1 $?

	"$KW" estate report --db "$URL" --trust "$KT_TMP/trust" --session "$S_A2" --html "$KT_TMP/db-$L.html"
	expect_eq "$L: estate report of a stored session exits 0" 0 $?
	check "$L: estate report: VALID" grep -q '<p id="verdict" class="valid">VALID' "$KT_TMP/db-$L.html"
	report_suite "$L: estate report" "$KT_TMP/db-$L.html" "$S_A2_LOG" "$S_A2_REC"
	out=$("$KW" estate report --db "$URL" --trust "$KT_TMP/trust" --session "$S_KILLED")
	check "$L: estate report (text) of the sealed session: valid, incomplete" \
		test "$(grep -c -e '^verdict: valid$' -e '^completeness: INCOMPLETE' <<<"$out")" -eq 2
	"$KW" estate report --db "$URL" --trust "$KT_TMP/trust" --session "$S_TLOG" >/dev/null 2>&1
	expect_eq "$L: estate report of a rejected session: not stored, exit 2" 2 $?
}

# --- the auditor's report ------------------------------------------------------
# Chromium (Debian's chromium), headless, offline: its own background services
# are turned off, and whatever URL it still asks for shows in a net log.
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
chrome() { # NETLOG ARGS...
	local log=$1
	shift
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --user-data-dir="$KT_TMP/chromium" \
		--disable-background-networking --disable-component-update --disable-sync --no-first-run \
		--disable-default-apps --disable-extensions --no-default-browser-check \
		--host-resolver-rules="MAP * ~NOTFOUND" --log-net-log="$log" "$@" 2>/dev/null
}
# URLs a page asked for: the net log less the browser's own services.
page_urls() {
	grep -o '"url":"[^"]*"' "$1" | cut -d'"' -f4 | sort -u |
		grep -Ev '^(https?://[^/]*(google\.com|googleapis\.com|gvt1\.com|gstatic\.com)/|file:|data:|chrome|about:)' || true
}

# marks HTML: the timeline's marks, permit and deny.
marks() { grep -o 'class="mark [a-z]*"' "$1" | sort | uniq -c | awk '{ print $3 "=" $1 }' | tr -d '"' | paste -sd' '; }
want_marks() { # LOG
	echo "deny=$(decisions "$1" | grep -c '"decision":"deny"')" \
		"permit=$(decisions "$1" | grep -c '"decision":"permit"')" | sed 's/ *[a-z]*=0//g; s/^ *//'
}
HOSTILE_ESC="&lt;script&gt;x&amp;&#39;&quot;"

report_suite() { # LABEL HTML LOG RECORD
	local L=$1 H=$2 log=$3 rec=$4
	check "$L: no markup from the log survives unescaped" test "$(grep -c '<script' "$H")" -eq 0
	check "$L: the page holds no script and no reference to fetch" \
		test "$(grep -Eic '<script|<iframe|<img|<link|<object|<embed|src=|href=|url\(|@import' "$H")" -eq 0
	expect_eq "$L: one SVG mark per decision, permit and deny apart" "$(want_marks "$log")" "$(marks "$H")"
	check "$L: the transcript hash is shown, recorded and derived, matching" \
		grep -q "$(jq -r .tool_transcript.hash "$rec").*$(jq -r .tool_transcript.hash "$rec").*match" "$H"
	check "$L: no derived value differs" test "$(grep -c DIFFERS "$H")" -eq 0
}

S_A2_LOG=$HA/logs/$S_A2.jsonl S_A2_REC=$HA/records/$S_A2.json
S_A2_POL=$HA/policies/$(jq -r .policy.bundle_hash "$S_A2_REC" | cut -d: -f2)
"$KW" report --html "$KT_TMP/a2.html" --key "$KT_TMP/$HOST_A.jwk" --log "$S_A2_LOG" --policy "$S_A2_POL" "$S_A2_REC"
expect_eq "report: a valid session exits 0" 0 $?
check "report: the verdict is VALID" grep -q '<p id="verdict" class="valid">VALID' "$KT_TMP/a2.html"
check "report: the hostile comm is shown escaped" grep -qF "$HOSTILE_ESC" "$KT_TMP/a2.html"
report_suite "report" "$KT_TMP/a2.html" "$S_A2_LOG" "$S_A2_REC"
R=$(jq -r .tool_transcript.hash "$S_A2_REC")
D=$(printf '['; tr '\n' ',' <"$S_A2_LOG" | head -c -1; printf ']')
expect_eq "report: the derived transcript hash is sha256sum of the framed log" "$R" \
	"sha256:$(printf '%s' "$D" | sha256sum | cut -c1-64)"
out=$("$KW" report --key "$KT_TMP/$HOST_A.jwk" --log "$S_A2_LOG" --policy "$S_A2_POL" "$S_A2_REC")
check "report (text): verdict, completeness, the process with its comm made safe" \
	test "$(grep -c -e '^verdict: valid$' -e '^completeness: complete' -e "^process: pid [0-9]* <script>x&'\": 1 decisions$" <<<"$out")" -eq 3
"$KW" report --html "$KT_TMP/tlog.html" --key "$KT_TMP/$HOST_A.jwk" --log "$T/logs/$S_TLOG.jsonl" \
	--policy "$S_A2_POL" "$T/records/$S_TLOG.json"
expect_eq "report: the tampered log exits 1" 1 $?
check "report: the tampered log's page says INVALID, transcript_mismatch, and the hash DIFFERS" \
	test "$(grep -c -e 'id="verdict" class="invalid"' -e '<code id="reason">transcript_mismatch' -e 'DIFFERS' "$KT_TMP/tlog.html")" -ge 3

if [ -n "$CHROMIUM" ]; then
	dom=$(chrome "$KT_TMP/net-a2.json" --dump-dom "file://$KT_TMP/a2.html")
	check "chromium: the DOM holds the verdict" grep -q 'id="verdict" class="valid">VALID' <<<"$dom"
	check "chromium: the DOM holds the hashes" grep -qF "$R" <<<"$dom"
	expect_eq "chromium: the DOM holds one SVG mark per decision" "$(want_marks "$S_A2_LOG")" \
		"$(marks /dev/stdin <<<"$dom")"
	check "chromium: the hostile comm is text in the DOM, not an element" \
		test "$(grep -c '<script' <<<"$dom")" -eq 0 -a "$(grep -cF "&lt;script&gt;x&amp;'\"" <<<"$dom")" -ge 1
	expect_eq "chromium: the page asks for no URL" "" "$(page_urls "$KT_TMP/net-a2.json")"
	# The control: a page that does fetch is seen fetching.
	printf '<!DOCTYPE html><img src="http://192.0.2.1/kwitness-control.png">' >"$KT_TMP/control.html"
	chrome "$KT_TMP/net-control.json" --dump-dom "file://$KT_TMP/control.html" >/dev/null
	expect_eq "chromium: (control) a page with an image is seen asking for it" \
		"http://192.0.2.1/kwitness-control.png" "$(page_urls "$KT_TMP/net-control.json")"
	chrome "$KT_TMP/net-shot.json" --window-size=1200,1400 --screenshot="$KT_TMP/report.png" \
		"file://$KT_TMP/a2.html" >/dev/null
	check "chromium: a screenshot of the page" test -s "$KT_TMP/report.png"
	mkdir -p "$KW_BUILD/test-artifacts" && cp "$KT_TMP/report.png" "$KW_BUILD/test-artifacts/estate-report.png"
else
	not_ok "chromium not installed (scripts/deps.sh installs it): the report is not rendered"
fi

DB=$KT_TMP/estate.sqlite
sqlite_q() { sqlite3 -batch -noheader "$DB" "$1"; }
suite sqlite "sqlite:$DB" sqlite_q
expect_eq "sqlite: the database file is private (0600)" 600 "$(stat -c %a "$DB")"
expect_eq "sqlite: schema version 6" 6 "$(sqlite_q 'SELECT max(version) FROM schema_version')"
check "without an estate setting the collectors spooled nothing" \
	test ! -e "$HA/spool" -a ! -e "$KT_TMP/hosts/$HOST_B/spool"

# --- PostgreSQL: a private cluster as an unprivileged user ---------------------
if ! pg_init; then
	not_ok "postgresql: a private cluster (initdb, pg_ctl) starts"
	finish
fi
ok "postgresql: a private cluster runs as nobody on a Unix socket"
suite postgresql "$PGURL" pg_q
expect_eq "postgresql: schema version 6" 6 "$(pg_q 'SELECT max(version) FROM schema_version')"

finish
