#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/gen_estate (the generator of bench_estate.sh's large estates): what it
# writes must be what kwitnessd writes, as the verifier and the estate judge
# it. The oracles are `kwitness verify --dir` (every record, every log line
# canonical, sequence, trailer, transcript hash), `kwitness estate ingest`
# (no refusal: the trust folder's hosts file binds each key to its host) and
# the "who did this" query, which must find the one planted decision.
source "$(dirname "$0")/../lib.sh"

GEN=$KW_BUILD/bench/gen_estate
if [ ! -x "$KW" ] || [ ! -x "$GEN" ]; then
	not_ok "kwitness or bench/gen_estate not built (make test-bins)"
	finish
fi
T=$(mktemp -d /tmp/kw-gen-estate.XXXXXX)
trap 'rm -rf "$T"' EXIT
HOSTS=3 SESSIONS=4 DECISIONS=250

"$GEN" --out "$T/e" --hosts $HOSTS --sessions $SESSIONS --decisions $DECISIONS --jobs 2 >"$T/gen.out"
check "gen_estate succeeds" test $? -eq 0
# planted: host-2 session SID seq N pid P proc REF comm nc connect 203.0.113.66:4444 deny
read -r _ PHOST _ PSID _ _ _ PPROC _ PREF _ <"$T/gen.out"
check "it names the planted decision" test -n "$PREF"
expect_eq "the generated file says the size" "$HOSTS $SESSIONS $DECISIONS" "$(cat "$T/e/generated")"
N=$(ls "$T"/e/hosts/*/records/*.json | wc -l)
expect_eq "one record per session" $((HOSTS * SESSIONS)) "$N"

# --- the verifier, host by host under the host's own key --------------------
for h in $(seq $HOSTS); do
	"$KW" verify --key "$T/e/trust/host-$h.jwk" --max-age 0 --dir "$T/e/hosts/host-$h" >"$T/v$h" 2>&1
	check "host-$h: verify --dir exits 0" test $? -eq 0
	check "host-$h: every record verified and complete" \
		grep -qx "summary: $SESSIONS records: $SESSIONS verified, 0 incomplete, 0 invalid" "$T/v$h"
done
# The same run must fail on a log changed after signing (the oracle can fail).
cp -r "$T/e" "$T/bad"
LOG=$(ls "$T"/bad/hosts/host-1/logs/*.jsonl | head -1)
sed -i '7s/"uid":1000/"uid":1001/' "$LOG"
"$KW" verify --key "$T/bad/trust/host-1.jwk" --max-age 0 --dir "$T/bad/hosts/host-1" >"$T/vbad" 2>&1
check "a changed line fails the same verification" test $? -ne 0
# Another host's key does not verify host-1's records.
"$KW" verify --key "$T/e/trust/host-2.jwk" --max-age 0 --dir "$T/e/hosts/host-1" >/dev/null 2>&1
check "records are signed by their own host's key" test $? -ne 0

# --- estate ingest: everything stored, nothing refused ----------------------
LINES=$(cat "$T"/e/hosts/*/logs/*.jsonl | wc -l)
DB=sqlite:$T/estate.sqlite
"$KW" estate ingest --create --db "$DB" --trust "$T/e/trust" "$T/e/hosts" >"$T/ingest" 2>&1
check "estate ingest exits 0" test $? -eq 0
check "estate ingest stores every record, every line, refuses none" grep -q \
	"summary: $N records: $N stored (0 incomplete, 0 at level 1), 0 already stored, 0 rejected; $LINES entries" \
	"$T/ingest"
expect_eq "estate rejected lists nothing" "" "$("$KW" estate rejected --db "$DB" 2>&1)"

# --- who did this: the planted connect, found by its address ----------------
"$KW" estate query --db "$DB" --tool net.connect --decision deny --object 203.0.113.66 --json >"$T/q"
expect_eq "the query finds one row" 1 "$(wc -l <"$T/q")"
check "on the planted host and session, denied, to its port" grep -q \
	"\"decision\":\"deny\".*\"host\":\"$PHOST\".*\"object\":\"203.0.113.66:4444/tcp\".*\"session\":\"$PSID\"" "$T/q"
# ...and the log names the process: nc, with its reference and arguments.
check "the session's process tree has the planted nc" grep -q \
	"^ *$PPROC /usr/bin/nc decisions=[1-9][0-9]* proc=$PREF argv=\"nc 203.0.113.66 4444\"" \
	<("$KW" log tree "$T/e/hosts/$PHOST/logs/$PSID.jsonl")

# --- the same seed, the same estate -----------------------------------------
"$GEN" --out "$T/again" --hosts $HOSTS --sessions $SESSIONS --decisions $DECISIONS --jobs 1 >/dev/null
sums() { (cd "$1" && find . -type f | sort | xargs sha256sum); }
expect_eq "a second run writes the same bytes" "$(sums "$T/e")" "$(sums "$T/again")"
finish
