#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Untrusted text stays text: a session whose sandbox id, cgroup name and
# process name (comm) carry terminal escapes (ESC, BEL, a C1 CSI) and bidi
# overrides. Every human-readable output (session list, status, kwitnessd's
# log, verify, report text and HTML, estate query's table) shows them as
# visible escapes (\x1b, \u202e) and holds no raw ESC, C1 or bidi byte;
# the --json outputs and the signed record carry the exact original string.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kwd_lib.sh"

kwd_require
command -v jq >/dev/null || kt_fail_all "jq missing (scripts/deps.sh)"
kwd_start
kwd_has_hook net.connect || kt_skip_feature net.connect "net.connect hooks unavailable on this kernel"
listeners_start

ESC=$'\e' RLO=$'\xe2\x80\xae' CSI=$'\xc2\x9b'
# sandbox id: a title-setting OSC ending in BEL, a right-to-left override, a C1 CSI
SBX="spiffe://test.kwitness.local/${ESC}]0;pwned"$'\a'"${RLO}txt.exe${CSI}2J"
SBX_SHOWN='spiffe://test.kwitness.local/\x1b]0;pwned\x07\u202etxt.exe\u009b2J'
CGN="cg${ESC}[31m${RLO}red"
CGN_SHOWN='cg\x1b[31m\u202ered'
# a program name: its first 15 bytes become the comm of the decisions
PROG="p${ESC}[5m${RLO}x"
PROG_SHOWN='p\x1b[5m\u202ex'
cp "$NP" "$KT_TMP/$PROG"

# raw FILE: 0 when FILE holds ESC, BEL, a C1 control or a bidi control
raw() { LC_ALL=C grep -qaP '[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\xaa-\xae\x8e\x8f]|\xe2\x81[\xa6-\xa9]|\xd8\x9c' "$1"; }
# safe LABEL FILE SHOWN...: FILE has no raw control and shows each escaped form
safe() {
	local label=$1 f=$2 s miss=
	shift 2
	if raw "$f"; then
		not_ok "$label: no raw control or bidi bytes"
		LC_ALL=C grep -naP '\x1b|\xe2\x80\xae' "$f" | head -3 | od -c | head -4 | sed 's/^/#   /'
	else
		ok "$label: no raw control or bidi bytes"
	fi
	for s in "$@"; do grep -qF -- "$s" "$f" || miss="$miss $s"; done
	if [ -z "$miss" ]; then ok "$label: the escaped form shown"; else
		not_ok "$label: the escaped form shown (missing:$miss)"
	fi
}

POL=$(policy_file text "{\"kwitness_policy\":1,\"mode\":\"enforce\",\"record\":\"all\",\"net\":{\"connect\":[\"127.0.0.1/32:$LPORT_A\"]}}")
cg=$(cg_make "$CGN") || kt_fail_all "cannot make a cgroup named with escapes"
sid=$(session_open "$cg" "$POL" "$SBX")
[ -n "$sid" ] || kt_fail_all "the session did not open"
cg_run "$cg" "$KT_TMP/$PROG" connect 127.0.0.1 "$LPORT_B" >"$KT_TMP/run.out"
expect_eq "the hostile program's connect is refused (a decision with its comm)" EPERM "$(cat "$KT_TMP/run.out")"

"$KW" session list --socket "$KT_SOCK" >"$KT_TMP/list.txt"
safe "session list" "$KT_TMP/list.txt" "$SBX_SHOWN" "$CGN_SHOWN"
"$KW" status --socket "$KT_SOCK" >"$KT_TMP/status.txt"
safe "status" "$KT_TMP/status.txt" "$SBX_SHOWN" "$CGN_SHOWN"
"$KW" session list --socket "$KT_SOCK" --json >"$KT_TMP/list.json"
expect_eq "session list --json: the exact sandbox id" "$SBX" \
	"$(jq -r --arg s "$sid" '.sessions[] | select(.session == $s) | .sandbox_id' "$KT_TMP/list.json")"
expect_eq "session list --json: the exact cgroup" "$cg" \
	"$(jq -r --arg s "$sid" '.sessions[] | select(.session == $s) | .cgroup' "$KT_TMP/list.json")"

session_close "$sid" >"$KT_TMP/close.txt" || kt_fail_all "the session did not close"
expect_eq "the record signs the exact sandbox id" "$SBX" "$(jq -r .subject "$REC")"
expect_eq "the log holds the exact comm" "$PROG" \
	"$(decisions "$LOG" | jq -r .comm | head -1)"
safe "kwitnessd's log lines" "$KT_TMP/kwitnessd.log" "$SBX_SHOWN" "$CGN_SHOWN"

"$KW" verify --key "$KT_TMP/signer.jwk" --log "$LOG" --policy "$POL" "$REC" >"$KT_TMP/verify.txt"
expect_eq "verify: the record verifies" 0 $?
safe "verify" "$KT_TMP/verify.txt" "$SBX_SHOWN"

"$KW" report --key "$KT_TMP/signer.jwk" --log "$LOG" --policy "$POL" "$REC" >"$KT_TMP/report.txt"
safe "report (text)" "$KT_TMP/report.txt" "$SBX_SHOWN" "$PROG_SHOWN"
"$KW" report --html "$KT_TMP/report.html" --key "$KT_TMP/signer.jwk" --log "$LOG" --policy "$POL" "$REC"
safe "report (HTML)" "$KT_TMP/report.html" "$PROG_SHOWN" 'pwned\x07\u202etxt.exe'

kwd_stop
mkdir -p "$KT_TMP/trust"
cp "$KT_TMP/signer.jwk" "$KT_TMP/trust/"
DB=sqlite:$KT_TMP/estate.sqlite
if "$KW" estate ingest --create --db "$DB" --trust "$KT_TMP/trust" "$KT_TMP/state" >"$KT_TMP/ingest.txt" 2>&1; then
	"$KW" estate query --db "$DB" --wide >"$KT_TMP/query.txt"
	safe "estate query's table" "$KT_TMP/query.txt" "$SBX_SHOWN"
	expect_eq "estate query --json: the exact sandbox id" "$SBX" \
		"$("$KW" estate query --db "$DB" --json | jq -r .sandbox_id | sort -u)"
else
	not_ok "estate ingest of the session"
	sed 's/^/#   /' "$KT_TMP/ingest.txt"
fi
finish
