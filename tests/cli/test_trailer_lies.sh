#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A decision log that contradicts its trailer is never only a warning. One
# kwitnessd-shaped log with sequence gaps (kw-loggen), in two records really
# signed over it: under its honest trailer (complete:false, the gaps counted)
# it is incomplete, which --allow-incomplete and the estate accept with a
# warning; under a trailer that hides the gaps (complete:true, 0 dropped,
# 0 seq gaps) `verify --allow-incomplete` and `estate ingest` both refuse it
# with log_inconsistent.
source "$(dirname "$0")/../lib.sh"

LOGGEN=$KW_BUILD/tests/kw-loggen
if [ ! -x "$KW" ] || [ ! -x "$LOGGEN" ]; then
	not_ok "kwitness or kw-loggen is not built"
	finish
fi
T=$(mktemp -d /tmp/kw-trailer-lies.XXXXXX)
trap 'rm -rf "$T"' EXIT
unset TRACE_PRIVATE_KEY_PEM

printf '{"kwitness_policy":1,"mode":"enforce","net":{"connect":["10.0.0.0/8:443"]}}\n' >"$T/bundle"
BH=$(sha256sum "$T/bundle" | cut -c1-64)
IMAGE=sha256:$(printf 'a%.0s' $(seq 64))
"$KW" keygen --out "$T/host.pem" >/dev/null
mkdir -p "$T/trust"
"$KW" key show --key "$T/host.pem" --jwk >"$T/trust/host.jwk"

# host_session NAME SEED EDIT: a state folder $T/NAME/h holding one session
# whose log is kw-loggen's (every 7th number dropped) passed through the sed
# script EDIT, and its record built over that log and signed. Sets SID.
host_session() {
	local d=$T/$1/h
	SID=$(printf '%s' "$1" | sha256sum | cut -c1-32)
	mkdir -p "$d/records" "$d/logs" "$d/policies"
	cp "$T/bundle" "$d/policies/$BH"
	"$LOGGEN" --decisions 60 --gap-every 7 --seed "$2" --session "$SID" \
		--sandbox-id "spiffe://t/$1" --bundle-hash "sha256:$BH" --image-digest "$IMAGE" |
		sed "$3" >"$d/logs/$SID.jsonl"
	"$KW" record build --sandbox-id "spiffe://t/$1" --image-digest "$IMAGE" --policy "$T/bundle" \
		--decisions "$d/logs/$SID.jsonl" --enforcement-mode enforce \
		--model-provider anthropic --model-id claude-x >"$T/unsigned"
	"$KW" sign --key "$T/host.pem" "$T/unsigned" >"$d/records/$SID.json"
}
HIDE='/"tool":"kwitness.close"/ { s/"complete":false/"complete":true/;
	s/"dropped":[0-9]*/"dropped":0/; s/"seq_gaps":[0-9]*/"seq_gaps":0/ }'

host_session honest 1 ''
HSID=$SID
host_session lies 2 "$HIDE"
LSID=$SID
trailer=$(grep '"tool":"kwitness.close"' "$T/lies/h/logs/$LSID.jsonl")
claims() { grep -o -e '"complete":true' -e '"dropped":0,' -e '"seq_gaps":0,' <<<"$trailer" | wc -l; }
expect_eq "the lying trailer claims complete, 0 dropped, 0 seq gaps" 3 "$(claims)"
expect_eq "... over a log that misses numbers (60 decisions, next_seq past 60)" 1 \
	"$(sed -n 's/.*"next_seq":\([0-9]*\).*/\1/p' <<<"$trailer" | awk '{ print ($1 > 60) }')"

verify() { # NAME: kwitness verify --allow-incomplete of that session; prints "rc first-line"
	local d=$T/$1/h sid=$2 out rc
	out=$("$KW" verify --key "$T/trust/host.jwk" --log "$d/logs/$sid.jsonl" --policy "$T/bundle" \
		--allow-incomplete "$d/records/$sid.json")
	rc=$?
	echo "$rc $(head -1 <<<"$out")"
}
out=$(verify honest "$HSID")
case $out in "0 warning: log_incomplete: "*) ok "honest trailer: --allow-incomplete verifies with a warning" ;;
*) not_ok "honest trailer: --allow-incomplete verifies with a warning (got: $out)" ;; esac
out=$(verify lies "$LSID")
case $out in
"1 invalid: log_inconsistent: "*"seq gaps"*)
	ok "lying trailer: --allow-incomplete refuses it, log_inconsistent" ;;
*) not_ok "lying trailer: --allow-incomplete refuses it, log_inconsistent (got: $out)" ;; esac
out=$("$KW" verify --key "$T/trust/host.jwk" --log "$T/lies/h/logs/$LSID.jsonl" --policy "$T/bundle" \
	--allow-incomplete --json "$T/lies/h/records/$LSID.json")
expect_eq "lying trailer: --json says invalid, log_inconsistent" "1 false log_inconsistent" \
	"$? $(jq -r '"\(.valid) \(.reason)"' <<<"$out")"

out=$("$KW" estate ingest --create --db "sqlite:$T/honest.sqlite" --trust "$T/trust" "$T/honest"); rc=$?
expect_eq "estate ingest, honest trailer: stored, counted incomplete" \
	"0 summary: 1 records: 1 stored (1 incomplete, 0 at level 1), 0 already stored, 0 rejected" \
	"$rc $(grep '^summary: ' <<<"$out" | sed 's/;.*//')"
out=$("$KW" estate ingest --create --db "sqlite:$T/lies.sqlite" --trust "$T/trust" "$T/lies"); rc=$?
expect_eq "estate ingest, lying trailer: rejected (exit 1), for log_inconsistent" \
	"1 summary: 1 records: 0 stored (0 incomplete, 0 at level 1), 0 already stored, 1 rejected, log_inconsistent 1" \
	"$rc $(grep '^summary: ' <<<"$out" | sed 's/;.*//')"
expect_eq "... its line names it and the reason" 1 \
	"$(grep -c "^rejected: .*$LSID.json: log_inconsistent: " <<<"$out")"
expect_eq "... and none of its decisions stored" 0 \
	"$("$KW" estate query --db "sqlite:$T/lies.sqlite" --count)"
finish
