#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kwitnessd start-up: bad configuration and unsafe keys stop it with one clear
# line; the configuration's defaults reach the record; TRACE_PRIVATE_KEY_PEM
# works; a second collector on the same socket is refused; without
# --foreground it detaches and still serves.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kwd_lib.sh"

kwd_require

# start_fail NAME WANT_TEXT ARGS...: kwitnessd exits non-zero, saying WANT_TEXT.
quiet() { "$@" >/dev/null 2>&1; }

start_fail() {
	local name=$1 want=$2 out rc
	shift 2
	out=$(timeout 60 "$KWD" --foreground --state-dir "$KT_TMP/state-fail" \
		--socket "$KT_TMP/fail.sock" --pin-dir none "$@" 2>&1)
	rc=$?
	if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -qF -- "$want" <<<"$out"; then
		ok "$name"
	else
		not_ok "$name (exit $rc)"
		echo "#   $out" | head -3
	fi
}

printf 'ringbuf_size = 65536\nbogus = 1\n' >"$KT_TMP/bad.conf"
start_fail "config: an unknown key is an error" "bad.conf:2: unknown key 'bogus'" \
	--key "$KT_TMP/key.pem" --config "$KT_TMP/bad.conf"
printf 'group = no-such-group-kwitness\n' >"$KT_TMP/badgroup.conf"
start_fail "config: an unknown group is an error" "unknown group" \
	--key "$KT_TMP/key.pem" --config "$KT_TMP/badgroup.conf"
printf 'ringbuf_size = 5000\n' >"$KT_TMP/badring.conf"
start_fail "config: ringbuf_size must be a power of two" "power of two" \
	--key "$KT_TMP/key.pem" --config "$KT_TMP/badring.conf"
printf 'loop_priority = urgent\n' >"$KT_TMP/badprio.conf"
start_fail "config: loop_priority must be normal or realtime" \
	"badprio.conf:1: loop_priority must be normal or realtime" \
	--key "$KT_TMP/key.pem" --config "$KT_TMP/badprio.conf"
printf 'log_backlog = 2G\n' >"$KT_TMP/badbacklog.conf"
start_fail "config: log_backlog is at most 1G" \
	"badbacklog.conf:1: log_backlog must be 0 or a size from 4096 to 1G" \
	--key "$KT_TMP/key.pem" --config "$KT_TMP/badbacklog.conf"
start_fail "--config that does not exist is an error" "No such file" \
	--key "$KT_TMP/key.pem" --config "$KT_TMP/none.conf"
out=$("$KWD" --ringbuf-size 1000 2>&1)
expect_eq "--ringbuf-size 1000: usage error (2)" 2 "$?"
cp "$KT_TMP/key.pem" "$KT_TMP/open-key.pem"
chmod 0640 "$KT_TMP/open-key.pem"
start_fail "a group-readable key is refused" "group- or world-accessible" \
	--key "$KT_TMP/open-key.pem" --config /dev/null
start_fail "a missing key is an error" "missing.pem" \
	--key "$KT_TMP/missing.pem" --config /dev/null

# Defaults from the configuration, the key from TRACE_PRIVATE_KEY_PEM.
"$KW" keygen --out "$KT_TMP/env-key.pem" >/dev/null
"$KW" key show --key "$KT_TMP/env-key.pem" --jwk >"$KT_TMP/env.jwk"
cat >"$KT_TMP/good.conf" <<'EOF'
# kwitnessd settings for the test
group = 0
ringbuf_size = 64K
verifier = spiffe://test.kwitness.local/collector
model_provider = example-provider
model_id = example-model-1
data_class = restricted
loop_priority = realtime
log_backlog = 8M
EOF
KT_SOCK=$KT_TMP/kwitnessd.sock
TRACE_PRIVATE_KEY_PEM=$(cat "$KT_TMP/env-key.pem") "$KWD" --foreground --state-dir "$KT_TMP/state" \
	--socket "$KT_SOCK" --pin-dir none --config "$KT_TMP/good.conf" 2>>"$KT_TMP/kwitnessd.log" &
KT_DPID=$!
for _ in $(seq 300); do [ -S "$KT_SOCK" ] && break; kwd_alive || break; sleep 0.1; done
if ! kwd_alive || [ ! -S "$KT_SOCK" ]; then
	sed 's/^/# /' "$KT_TMP/kwitnessd.log" | tail -3
	kt_fail_all "kwitnessd did not start"
fi
expect_eq "socket mode 0660" 660 "$(stat -c %a "$KT_SOCK")"
expect_eq "the PEM from TRACE_PRIVATE_KEY_PEM is wiped from /proc/PID/environ" 0 \
	"$(tr '\0' '\n' <"/proc/$KT_DPID/environ" | grep -c 'PRIVATE KEY')"
expect_eq "ring buffer size from the configuration" "ringbuf:   65536 bytes per session" \
	"$("$KW" status --socket "$KT_SOCK" | grep '^ringbuf:')"
expect_eq "log backlog from the configuration, empty while idle" "8388608 0" \
	"$("$KW" status --socket "$KT_SOCK" --json | jq -r '"\(.log_backlog.max_bytes) \(.log_backlog.bytes)"')"
# Field 41 of /proc/PID/task/TID/stat: the thread's policy (2: SCHED_RR).
# The status reply above came from the loop, which sets its priority first;
# the I/O thread (named kwd-io) sets its own as it starts.
thread_policy() { sed 's/.*) //' "/proc/$KT_DPID/task/$1/stat" | cut -d' ' -f39; }
io_tid=$(grep -lx kwd-io /proc/$KT_DPID/task/*/comm | cut -d/ -f5)
if grep -q "loop_priority = realtime not set" "$KT_TMP/kwitnessd.log"; then
	skip "$(grep -o 'loop_priority = realtime not set ([^)]*)' "$KT_TMP/kwitnessd.log" | head -1)"
else
	expect_eq "loop_priority = realtime: the loop (main) thread is SCHED_RR" 2 \
		"$(thread_policy "$KT_DPID")"
	expect_eq "loop_priority = realtime: the I/O thread is SCHED_RR" 2 \
		"$([ -n "$io_tid" ] && thread_policy "$io_tid")"
fi
others=$(for t in /proc/$KT_DPID/task/*; do
	t=${t##*/}; [ "$t" = "$KT_DPID" ] || [ "$t" = "$io_tid" ] || thread_policy "$t"
done | sort -u | tr '\n' ' ')
expect_eq "loop_priority = realtime: the other threads stay SCHED_OTHER" "0 " "$others"
# Every thread but the loop (which has the process's name) is named for
# what it does (kwd-io, kwd-watch...: thread.c), for ps -L and top.
names=$(for t in /proc/$KT_DPID/task/*; do
	[ "${t##*/}" = "$KT_DPID" ] || cat "$t/comm"
done | sort | tr '\n' ' ')
check "every thread but the loop has a kwd- name ($names)" grep -qE '^(kwd-[a-z-]+ )+$' <<<"$names"
if kwd_has_hook net.connect; then
	cg=$(cg_make conf)
	pol=$(policy_file conf '{"kwitness_policy":1,"mode":"advisory","net":{"connect":[]}}')
	sid=$(session_open "$cg" "$pol")
	session_close "$sid" >/dev/null
	rec=$(cat "$REC")
	for kv in '"provider":"example-provider"' '"model_id":"example-model-1"' \
		'"data_class":"restricted"' '"verifier":"spiffe://test.kwitness.local/collector"' \
		'"enforcement_mode":"advisory"'; do
		check "record carries $kv" grep -qF "$kv" <<<"$rec"
	done
	KT_TMP_SIGNER=$KT_TMP/signer.jwk
	check "record signed with the TRACE_PRIVATE_KEY_PEM key" \
		quiet "$KW" verify --key "$KT_TMP/env.jwk" --log "$LOG" --policy "$POL" "$REC"
	if "$KW" verify --key "$KT_TMP_SIGNER" "$REC" >/dev/null 2>&1; then
		not_ok "record does not verify with another key"
	else
		ok "record does not verify with another key"
	fi
else
	skip_feature net.connect "configuration defaults not checked in a record"
fi
start_fail "a second collector on the same socket is refused" "another kwitnessd" \
	--key "$KT_TMP/key.pem" --config /dev/null --socket "$KT_SOCK"
check "the first collector still answers" quiet "$KW" status --socket "$KT_SOCK"
check "the collector stops on SIGTERM" kwd_stop
check "the socket file is removed at stop" test ! -e "$KT_SOCK"

# A collector killed with open sessions: the next one seals them.
kwd_start
if kwd_has_hook net.connect; then
	listeners_start
	cg=$(cg_make crash)
	pol=$(policy_file crash "{\"kwitness_policy\":1,\"mode\":\"enforce\",\"net\":{\"connect\":[\"127.0.0.1/32:$LPORT_A\"]}}")
	sid=$(session_open "$cg" "$pol")
	LOG_CRASH=$KT_TMP/state/logs/$sid.jsonl
	r1=$(cg_run "$cg" "$NP" connect 127.0.0.1 $LPORT_A)
	r2=$(cg_run "$cg" "$NP" connect 127.0.0.1 $LPORT_B)
	start_fail "a second collector on the same state folder is refused" \
		"another kwitnessd uses this state folder" --key "$KT_TMP/key.pem" --config /dev/null \
		--state-dir "$KT_TMP/state" --socket "$KT_TMP/other.sock"
	# Until the collector has written both decisions out (the kill must not
	# race the write: what the log holds is what gets sealed).
	for _ in $(seq 100); do
		[ "$(decisions "$LOG_CRASH" 2>/dev/null | grep -c .)" -ge 2 ] && break
		sleep 0.1
	done
	expect_eq "before the kill: both decisions are in the log" 2 \
		"$(decisions "$LOG_CRASH" | grep -c .)"
	kill -KILL "$KT_DPID"
	wait "$KT_DPID" 2>/dev/null
	KT_DPID=
	LOG=$KT_TMP/state/logs/$sid.jsonl REC=$KT_TMP/state/records/$sid.json
	POL=$KT_TMP/state/policies/$(sha256sum "$pol" | cut -d' ' -f1)
	check "killed collector: no record yet" test ! -e "$REC"
	printf '{"cgroup":1,"comm":"torn' >>"$LOG" # a write cut by the crash
	rm -f "$KT_SOCK"
	kwd_start
	# requests are served once the start's resume and seal are done
	quiet "$KW" status --socket "$KT_SOCK"
	check "restarted collector: the unclosed session has a record" test -s "$REC"
	t=$(tail -1 "$LOG")
	expect_eq "sealed trailer: kwitness.close, complete false, 2 decisions, 1 denial" \
		"kwitness.close false 2 1" \
		"$(jfield "$t" tool) $(jfield "$t" complete) $(jfield "$t" decisions) $(jfield "$t" denials)"
	check "sealed trailer says why" grep -q '"sealed":"the collector stopped' <<<"$t"
	check "the torn line was cut" test "$(grep -c torn "$LOG")" -eq 0
	check "sealed record verifies with the log and the bundle, as incomplete (log_incomplete)" \
		verify_incomplete
	expect_eq "the operations before the crash (ok, EPERM) are both in the log" "ok EPERM 2" \
		"$r1 $r2 $(decisions "$LOG" | grep -c .)"
	kwd_stop
else
	skip_feature net.connect "sealing not tested"
	kwd_stop
fi

# Without --foreground: detaches (the starting process exits 0), still serves.
sock2=$KT_TMP/bg.sock
"$KWD" --state-dir "$KT_TMP/state-bg" --socket "$sock2" --pin-dir none \
	--key "$KT_TMP/key.pem" --config /dev/null
expect_eq "without --foreground: the starting process exits 0" 0 "$?"
for _ in $(seq 50); do [ -S "$sock2" ] && break; sleep 0.1; done
bgpid=$(pgrep -f -- "--socket $sock2" | head -1)
if [ -n "$bgpid" ]; then
	KT_DPID=$bgpid
	check "detached collector serves" quiet "$KW" status --socket "$sock2"
	check "detached collector stops on SIGTERM" kwd_stop
else
	not_ok "detached collector is running"
fi
finish
