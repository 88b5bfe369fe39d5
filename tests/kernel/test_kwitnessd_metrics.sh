#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kwitnessd --metrics: a real Prometheus (Debian's package, on a loopback port
# with a temporary configuration) scrapes the collector during a session, and
# its HTTP API counts the session's decisions and denials as the log holds
# them; promtool accepts the exposition; /healthz answers; the open entry
# names the collector's version; syslog_decisions = deny says each denial as
# the log's entry. Hostile clients (a huge request head,
# slowloris connections filling every slot) are cut off, and the collector
# goes on logging and answering its control socket meanwhile.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kwd_lib.sh"

command -v prometheus >/dev/null && command -v promtool >/dev/null ||
	kt_skip_all "prometheus is not installed (scripts/deps.sh installs it)"
command -v curl >/dev/null || kt_skip_all "curl is not installed"
kwd_require
listeners_start
free_ports
MPORT=$BPORT_A PPORT=$BPORT_B
M=http://127.0.0.1:$MPORT
P=http://127.0.0.1:$PPORT
PROM_PID=

printf 'metrics = 127.0.0.1:%s\nmetrics_session_labels = 2\nsyslog_decisions = deny\n' "$MPORT" \
	>"$KT_TMP/kwd.conf"
kwd_start --config "$KT_TMP/kwd.conf"

stop_prometheus() { [ -n "$PROM_PID" ] && kill "$PROM_PID" 2>/dev/null && wait "$PROM_PID" 2>/dev/null; }
# a held loop is let go first (its tracer's end detaches it), or kwitnessd
# could not take its SIGTERM
stop_holder() { [ -n "$HOLD_PID" ] && kill "$HOLD_PID" 2>/dev/null && wait "$HOLD_PID" 2>/dev/null; }
trap 'stop_holder; stop_prometheus; kwd_cleanup' EXIT

# http PATH [CURL-ARGS]: "STATUS BODY" of one request to the metrics endpoint
http() {
	local p=$1
	shift
	curl -s -m 5 -o "$KT_TMP/body" -w '%{http_code}' "$@" "$M$p"
	printf ' %s' "$(head -c 200 "$KT_TMP/body")"
}

expect_eq "/healthz: 200 ok while attached and keeping up" "200 ok" "$(http /healthz)"
expect_eq "/other: 404" 404 "$(http /other | cut -d' ' -f1)"
expect_eq "POST /metrics: 405" 405 "$(http /metrics -X POST | cut -d' ' -f1)"
expect_eq "HEAD /healthz: 200" "200 " "$(http /healthz -I | head -c 4)"

# ---- a stalled loop -----------------------------------------------------
# kw-threadstop holds the loop thread alone (its TID is the PID) in a
# ptrace-stop; the metrics thread goes on answering, and /healthz must say
# 503 once the loop has not ticked for 2 s; let go, it says 200 again.
# healthz_until WANT: /healthz until its status is WANT (10 s at most); prints the last answer
healthz_until() {
	local got
	for _ in $(seq 50); do
		got=$(http /healthz)
		[ "${got%% *}" = "$1" ] && break
		sleep 0.2
	done
	echo "$got"
}
mkfifo "$KT_TMP/hold"
"$KW_BUILD/tests/kw-threadstop" "$KT_DPID" 60 <"$KT_TMP/hold" >"$KT_TMP/hold.out" 2>&1 &
HOLD_PID=$!
exec {HOLD_FD}>"$KT_TMP/hold"
for _ in $(seq 100); do
	grep -q '^stopped' "$KT_TMP/hold.out" || ! kill -0 "$HOLD_PID" 2>/dev/null && break
	sleep 0.1
done
yama=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null)
if ! grep -q '^stopped' "$KT_TMP/hold.out"; then
	wait "$HOLD_PID"
	rc=$?
	HOLD_PID=
	exec {HOLD_FD}>&-
	if [ "$rc" = 3 ] && [ "$yama" = 3 ]; then
		skip "a stalled loop: Yama's ptrace_scope is 3 (no ptrace at all): $(head -1 "$KT_TMP/hold.out")"
	else
		not_ok "a stalled loop: kw-threadstop could not hold the loop (exit $rc): $(head -1 "$KT_TMP/hold.out")"
	fi
else
	# field 3 of /proc/PID/task/TID/stat: t, stopped by a tracer
	expect_eq "the loop thread is held (tracing stop)" "t" \
		"$(sed 's/.*) //' "/proc/$KT_DPID/task/$KT_DPID/stat" | cut -d' ' -f1)"
	got=$(healthz_until 503)
	check "a stalled loop: /healthz answers 503 and why ($got)" \
		grep -qE '^503 not keeping up: the loop last ran [0-9]+ ms ago$' <<<"$got"
	exec {HOLD_FD}>&- # kw-threadstop reads the end of its input: lets go
	wait "$HOLD_PID"
	expect_eq "kw-threadstop let the loop go" "0 released $KT_DPID" "$? $(tail -1 "$KT_TMP/hold.out")"
	HOLD_PID=
	expect_eq "the loop running again: /healthz answers 200 ok" "200 ok" "$(healthz_until 200)"
fi

# Prometheus, scraping every second, with its own storage in the test folder
cat >"$KT_TMP/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: kwitnessd
    static_configs:
      - targets: ['127.0.0.1:$MPORT']
YML
prometheus --config.file="$KT_TMP/prometheus.yml" --storage.tsdb.path="$KT_TMP/tsdb" \
	--web.listen-address="127.0.0.1:$PPORT" --log.level=warn 2>"$KT_TMP/prometheus.log" &
PROM_PID=$!
for _ in $(seq 100); do curl -sf -m 1 "$P/-/ready" >/dev/null && break; sleep 0.1; done
curl -sf -m 1 "$P/-/ready" >/dev/null || kt_fail_all "prometheus did not start: $(tail -3 "$KT_TMP/prometheus.log")"

# promql QUERY: the value of QUERY's first series now, as Prometheus has it
promql() {
	curl -s -m 2 "$P/api/v1/query" --data-urlencode "query=$1" |
		jq -r '.data.result[0].value[1] // "none"'
}
# prom_wait QUERY WANT: until Prometheus says WANT (15 s at most); prints the last value
prom_wait() {
	local v
	for _ in $(seq 75); do
		v=$(promql "$1")
		[ "$v" = "$2" ] && break
		sleep 0.2
	done
	echo "$v"
}

N_PERMIT=300 N_DENY=40
kwd_has_hook net.send || kt_skip_feature net.send "net.send hooks unavailable on this kernel"
policy_session metrics enforce deny "\"net\":{\"send\":[\"127.0.0.1/32:$LPORT_A\"]}" ||
	kt_fail_all "the session did not open"
cg_run "$cg" "$NP" flood sendto 127.0.0.1 "$LPORT_A" $N_PERMIT >/dev/null
cg_run "$cg" "$NP" flood sendto 127.0.0.1 "$LPORT_B" $N_DENY >/dev/null

expect_eq "Prometheus: the open session's denials (its own series)" $N_DENY \
	"$(prom_wait "kwitness_session_denials_total{session=\"$sid\"}" $N_DENY)"
expect_eq "Prometheus: kwitnessd is up" 1 "$(promql 'up{job="kwitnessd"}')"

curl -s -m 5 "$M/metrics" >"$KT_TMP/metrics.txt"
if promtool check metrics <"$KT_TMP/metrics.txt" >"$KT_TMP/promtool.out" 2>&1; then
	ok "promtool check metrics accepts the exposition ($(grep -c '^kwitness_' "$KT_TMP/metrics.txt") kwitness samples)"
else
	not_ok "promtool check metrics"
	sed 's/^/#   /' "$KT_TMP/promtool.out" | head -5
fi
echo "# scrape: $(curl -s -m 5 -o /dev/null -w '%{time_total} s, %{size_download} bytes' "$M/metrics")"

# ---- hostile clients ----------------------------------------------------
# A request head past 4 KiB: 431, and the connection closed.
got=$(python3 - "$MPORT" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
try:
    s.sendall(b"GET /metrics HTTP/1.1\r\nX: " + b"a" * (1 << 20))
except OSError:
    pass  # the collector closed its end after the first 4 KiB
data = b""
try:
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
except OSError:
    pass
print(data.split(b"\r\n")[0].decode() or "nothing")
PY
)
expect_eq "a 1 MiB request head: 431 and closed" "HTTP/1.1 431 Request Header Fields Too Large" "$got"

# Slowloris: 8 connections (every slot) sending a byte each 0.3 s. A ninth
# client is told 503 at once; the collector meanwhile logs decisions and
# answers its control socket; after the 5 s deadline each slow one is cut.
python3 - "$MPORT" "$KT_TMP/slow.ready" >"$KT_TMP/slow.out" <<'PY' &
import socket, sys, time
port = int(sys.argv[1])
conns = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(8)]
open(sys.argv[2], "w").close()  # every slot taken
start = time.time()
open_ = set(range(8))
msg = b"GET /metrics HTTP/1.1\r\nX-Slow: "
i = 0
while open_ and time.time() - start < 15:
    for k in list(open_):
        try:
            conns[k].send(msg[i:i + 1] if i < len(msg) else b"a")
        except OSError:
            open_.discard(k)
    i += 1
    time.sleep(0.3)
    for k in list(open_):
        conns[k].setblocking(False)
        try:
            if conns[k].recv(100) == b"":
                open_.discard(k)
        except BlockingIOError:
            pass
        except OSError:
            open_.discard(k)
        conns[k].setblocking(True)
print("cut after %.1f s, %d still open" % (time.time() - start, len(open_)))
PY
SLOW_PID=$!
for _ in $(seq 100); do [ -e "$KT_TMP/slow.ready" ] && break; sleep 0.05; done
sleep 0.2 # the collector's thread accepts them
got=$(curl -s -m 2 "$M/metrics" | head -c 5)
expect_eq "every slot held by slow clients: a new one hears 503 busy at once" "busy" "$got"
t0=$(date +%s%N)
cg_run "$cg" "$NP" flood sendto 127.0.0.1 "$LPORT_B" 10 >/dev/null
"$KW" status --socket "$KT_SOCK" >/dev/null
ms=$((($(date +%s%N) - t0) / 1000000))
check "slow scrapers: the control socket answers at once ($ms ms)" test $ms -lt 2000
n=$("$KW" status --json --socket "$KT_SOCK" | jq -r --arg s "$sid" '.sessions[] | select(.session == $s) | .denials')
expect_eq "slow scrapers: the session's decisions keep being logged" $((N_DENY + 10)) "$n"
wait "$SLOW_PID"
slow=$(cat "$KT_TMP/slow.out")
check "slow clients are cut at the deadline ($slow)" grep -qE '^cut after ([5-7])\.[0-9] s, 0 still open$' <<<"$slow"
expect_eq "after the slow clients: /healthz answers 200" "200 ok" "$(http /healthz)"

# ---- the totals against the log --------------------------------------------
session_close "$sid" >/dev/null
permits=$(decisions "$LOG" | grep '"tool":"net.send"' | grep -c '"decision":"permit"')
denials=$(decisions "$LOG" | grep '"tool":"net.send"' | grep -c '"decision":"deny"')
echo "# the log: $permits net.send permits, $denials denials"
expect_eq "Prometheus: net.send permits == the log's" "$permits" \
	"$(prom_wait 'kwitness_decisions_total{tool="net.send",decision="permit"}' "$permits")"
expect_eq "Prometheus: net.send denials == the log's" "$denials" \
	"$(prom_wait 'kwitness_decisions_total{tool="net.send",decision="deny"}' "$denials")"
expect_eq "Prometheus: every denial == the log's deny entries" "$(decisions "$LOG" | grep -c '"decision":"deny"')" \
	"$(prom_wait 'kwitness_denials_total' "$(decisions "$LOG" | grep -c '"decision":"deny"')")"
expect_eq "Prometheus: one session opened, one closed" "1 1" \
	"$(prom_wait kwitness_sessions_opened_total 1) $(prom_wait kwitness_sessions_closed_total 1)"
expect_eq "Prometheus: no session open now" 0 "$(prom_wait 'kwitness_sessions{state="open"}' 0)"
check "Prometheus: the process's resident memory is reported" \
	test "$(promql process_resident_memory_bytes | cut -d. -f1)" -gt 1000000
# syslog_decisions = deny: each denial as a line on kwitnessd's log stream
# (stderr under --foreground), the very entry the log holds
decisions "$LOG" | grep '"decision":"deny"' | sort >"$KT_TMP/deny.log"
for _ in $(seq 50); do
	grep -F "kwitnessd: decision session=$sid " "$KT_TMP/kwitnessd.log" |
		sed "s/^kwitnessd: decision session=$sid //" | sort >"$KT_TMP/deny.lines"
	[ "$(wc -l <"$KT_TMP/deny.lines")" -ge "$(wc -l <"$KT_TMP/deny.log")" ] && break
	sleep 0.1
done
if [ -s "$KT_TMP/deny.log" ] && cmp -s "$KT_TMP/deny.log" "$KT_TMP/deny.lines"; then
	ok "syslog_decisions = deny: one line per denial, each the log's entry ($(wc -l <"$KT_TMP/deny.lines"))"
else
	not_ok "syslog_decisions = deny: $(wc -l <"$KT_TMP/deny.lines") lines for $(wc -l <"$KT_TMP/deny.log") denials"
	diff "$KT_TMP/deny.log" "$KT_TMP/deny.lines" | head -4 | sed 's/^/#   /'
fi
check "syslog_decisions = deny: no permit is said" \
	test "$(grep -F "kwitnessd: decision session=$sid " "$KT_TMP/kwitnessd.log" | grep -c '"decision":"permit"')" = 0
expect_eq "Prometheus: decision lines sent == denials" "$(wc -l <"$KT_TMP/deny.log")" \
	"$(prom_wait 'kwitness_decision_lines_total{result="sent"}' "$(wc -l <"$KT_TMP/deny.log")")"
expect_eq "the open entry names the collector's version" \
	"$("$KWD" --version | head -n1 | cut -d' ' -f2)" "$(jfield "$(head -n1 "$LOG")" collector_version)"

finish
