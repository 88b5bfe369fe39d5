#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The OTLP/HTTP logs exporter: with otlp_endpoint and otlp_decisions = deny,
# a receiver built on the OpenTelemetry project's own message types
# (tests/helpers/otlp_receiver.js: @opentelemetry/otlp-transformer, from
# npm) gets every denial of a session, each with its session id and seq and
# the log's line as its body, and no permit; the receiver refuses the first
# two requests (503), so the batch gets through only by the retries.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kwd_lib.sh"

NPM_DIR=$KW_BUILD/npm
kwd_require
command -v node >/dev/null || kt_skip_all "node missing (scripts/deps.sh installs it)"
[ -f "$NPM_DIR/node_modules/@opentelemetry/otlp-transformer/build/src/generated/root.js" ] ||
	kt_fail_all "@opentelemetry/otlp-transformer missing from $NPM_DIR (scripts/deps.sh)"

node "$KW_ROOT/tests/helpers/otlp_receiver.js" "$NPM_DIR" "$KT_TMP/port" "$KT_TMP/otlp.out" 2 &
RPID=$!
trap 'kill $RPID 2>/dev/null; kwd_cleanup' EXIT
for _ in $(seq 100); do [ -s "$KT_TMP/port" ] && break; sleep 0.05; done
[ -s "$KT_TMP/port" ] || kt_fail_all "the receiver did not start"
printf 'otlp_endpoint = http://127.0.0.1:%s/v1/logs\notlp_decisions = deny\n' \
	"$(cat "$KT_TMP/port")" >"$KT_TMP/kwitnessd.conf"
kwd_start --config "$KT_TMP/kwitnessd.conf"
kwd_has_hook net.send || kt_skip_feature net.send "net.send hooks unavailable on this kernel"
listeners_start

# sends to port A are permitted, to port B denied
policy_session otlp enforce deny "\"net\":{\"send\":[\"127.0.0.1/32:$LPORT_A\"]}" ||
	kt_fail_all "session opens"
cg_run "$cg" "$NP" flood sendto 127.0.0.1 "$LPORT_A" 200 >/dev/null
out=$(cg_run "$cg" "$NP" flood sendto 127.0.0.1 "$LPORT_B" 300)
echo "# denied flood: $out"
cg_run "$cg" "$NP" flood sendto 127.0.0.1 "$LPORT_A" 200 >/dev/null
session_close "$sid" >/dev/null
denials=$(grep -c '"decision":"deny"' "$LOG")
expect_eq "the log holds 300 denials" 300 "$denials"

# the exporter retries with backoff (0.25 s, 0.5 s, ...): a few seconds at most
for _ in $(seq 200); do
	[ "$(cat "$KT_TMP/otlp.out" 2>/dev/null | wc -l)" -ge "$denials" ] && break
	sleep 0.1
done
check "the receiver decoded every request it took" test ! -s "$KT_TMP/otlp.out.errors"
expect_eq "the receiver got one record per denial" "$denials" "$(wc -l <"$KT_TMP/otlp.out")"
grep '"decision":"deny"' "$LOG" | jq -r '"\(.seq)"' | sort -n >"$KT_TMP/log.seqs"
jq -r --arg s "$sid" 'select(.session == $s) | .seq' "$KT_TMP/otlp.out" | sort -n >"$KT_TMP/otlp.seqs"
check "every denial's seq, with the session id" cmp -s "$KT_TMP/log.seqs" "$KT_TMP/otlp.seqs"
grep '"decision":"deny"' "$LOG" | sort >"$KT_TMP/log.deny"
jq -r .body "$KT_TMP/otlp.out" | sort >"$KT_TMP/otlp.bodies"
check "each record's body is the log's line, byte for byte" cmp -s "$KT_TMP/log.deny" "$KT_TMP/otlp.bodies"
expect_eq "no permit exported (otlp_decisions = deny)" 0 "$(jq -r .decision "$KT_TMP/otlp.out" | grep -vc deny)"
expect_eq "each a WARN (severityNumber 13) of service kwitnessd" "$denials" \
	"$(jq -r 'select(.severity == 13 and .service == "kwitnessd") | .seq' "$KT_TMP/otlp.out" | wc -l)"
kwd_stop
kill -TERM "$RPID"
wait "$RPID" 2>/dev/null
check "the first two requests were refused and tried again" \
	test "$(cat "$KT_TMP/otlp.out.requests" 2>/dev/null || echo 0)" -ge 3
check "kwitnessd says what it exported" grep -q 'otlp: 300 record(s) exported' "$KT_TMP/kwitnessd.log"
finish
