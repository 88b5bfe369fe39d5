#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Egress by name on a real kernel (the host's, and the VM's: tests/vm/init):
# a policy that names hosts, a local DNS server (kw-dnstest serve) answering
# allowed.test -> 127.0.0.2, denied.test -> 127.0.0.3 and v6.test -> ::1
# (AAAA), TCP servers on those addresses. The session's DNS goes through
# kwitnessd's resolver whatever server the sandbox asks; an address opens only
# once an allowed name's answer named it, for the rule's ports and the
# answer's TTL; the log holds every question (dns.query, from the collector)
# and the connects name the query that opened their address (via, via_seq);
# an explicit CIDR deny still refuses an address a name opened; the record
# verifies.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kwd_lib.sh"

DT=$KW_BUILD/tests/kw-dnstest
[ -x "$DT" ] || kt_fail_all "$DT not built (make test-bins)"
kwd_require
DNS_PID= TCP_PID= V6_ADDED=
dns_cleanup() {
	[ -n "$DNS_PID" ] && kill "$DNS_PID" 2>/dev/null
	[ -n "$TCP_PID" ] && kill "$TCP_PID" 2>/dev/null
	[ -n "$V6_ADDED" ] && ip -6 addr del ::1/128 dev lo
	kwd_cleanup
}
trap dns_cleanup EXIT
# The AAAA answers point at the IPv6 loopback: lo has ::1 wherever IPv6 is on;
# where lo lacks it (IPv6 on, the address removed) the suite adds it, and
# removes it again at the end.
if ! ip -6 addr show dev lo 2>/dev/null | grep -q 'inet6 ::1/128'; then
	[ -e /proc/net/if_inet6 ] || kt_skip_all "this kernel has no IPv6 (no /proc/net/if_inet6)"
	ip -6 addr add ::1/128 dev lo 2>/dev/null || kt_fail_all "lo has no ::1 and it cannot be added"
	V6_ADDED=1
fi
kwd_start
kwd_has_hook net.dns || kt_skip_feature cgroup.net "the net.dns hooks (cgroup recvmsg, connect, sendmsg) are unavailable"

ZONE=$KT_TMP/zone
cat >"$ZONE" <<'EOF'
allowed.test A 127.0.0.2 1
denied.test A 127.0.0.3 60
a.wild.test A 127.0.0.5 60
cdn.test CNAME edge.cdn-provider.test 60
edge.cdn-provider.test A 127.0.0.4 60
moving.test A 127.0.0.6 1
v6.test AAAA ::1 1
EOF
"$DT" serve "$ZONE" "$KT_TMP/dns.port" &
DNS_PID=$!
"$DT" listen "$KT_TMP/tcp.port" 127.0.0.2 127.0.0.3 127.0.0.4 127.0.0.5 127.0.0.6 127.0.0.7 ::1 &
TCP_PID=$!
for _ in $(seq 50); do [ -s "$KT_TMP/dns.port" ] && [ -s "$KT_TMP/tcp.port" ] && break; sleep 0.1; done
DNSP=$(cat "$KT_TMP/dns.port") P=$(cat "$KT_TMP/tcp.port")
[ -n "$DNSP" ] && [ -n "$P" ] || kt_fail_all "the test DNS server or the TCP servers did not start"
expect_eq "the test DNS server answers (not steered: outside any session)" "NOERROR 127.0.0.2" \
	"$("$DT" query 127.0.0.1 "$DNSP" allowed.test)"

q() { cg_run "$cg" "$DT" query "$@"; }
conn() { cg_run "$cg" "$NP" connect "$@"; }

# ---- the main session ----
pol=$(policy_file names "{\"kwitness_policy\":1,\"mode\":\"enforce\",\"net\":{\"connect\":[\"allowed.test:$P\",\"*.wild.test:$P\",\"cdn.test:$P\",\"moving.test:$P\",\"v6.test:$P\"],\"dns\":{\"resolvers\":[\"127.0.0.1:$DNSP\"]}}}")
cg=$(cg_make names)
sid=$(session_open "$cg" "$pol")
[ -n "$sid" ] || kt_fail_all "a session with host names opens"

expect_eq "before any question, 127.0.0.2 is refused" EPERM "$(conn 127.0.0.2 "$P")"
expect_eq "allowed.test resolves through a server the sandbox picked (steered; the answer's source is the server asked)" \
	"NOERROR 127.0.0.2" "$(q 192.0.2.53 53 allowed.test)"
expect_eq "allowed.test:$P connects" ok "$(conn 127.0.0.2 "$P")"
expect_eq "allowed.test on another port is refused" EPERM "$(conn 127.0.0.2 $((P == 65535 ? P - 1 : P + 1)))"
expect_eq "denied.test gets REFUSED" "REFUSED " "$(q 192.0.2.53 53 denied.test)"
expect_eq "denied.test's address is refused" EPERM "$(conn 127.0.0.3 "$P")"
expect_eq "DNS over TCP is steered and answered the same" "NOERROR 127.0.0.2" \
	"$(q 198.51.100.7 53 allowed.test A tcp)"
expect_eq "the test DNS server itself (a plain destination) is not reachable" EPERM \
	"$(cg_run "$cg" "$NP" connect 127.0.0.1 "$DNSP")"
sys=$(cg_run "$cg" "$DT" resolve allowed.test)
expect_eq "the system resolver (getaddrinfo, whatever /etc/resolv.conf says) gets the answer" 127.0.0.2 "$sys"
expect_eq "wildcard: a.wild.test resolves" "NOERROR 127.0.0.5" "$(q 192.0.2.53 53 a.wild.test)"
expect_eq "wildcard: a.wild.test's address connects" ok "$(conn 127.0.0.5 "$P")"
expect_eq "wildcard: wild.test itself is not under *.wild.test" "REFUSED " "$(q 192.0.2.53 53 wild.test)"
expect_eq "CNAME: cdn.test resolves through its chain" "NOERROR 127.0.0.4" "$(q 192.0.2.53 53 cdn.test)"
expect_eq "CNAME: the chain's address connects" ok "$(conn 127.0.0.4 "$P")"
expect_eq "moving.test resolves to its first address" "NOERROR 127.0.0.6" "$(q 192.0.2.53 53 moving.test)"
expect_eq "moving.test's first address connects" ok "$(conn 127.0.0.6 "$P")"
# ---- AAAA: an IPv6 answer opens connect6 to its address, for its TTL ----
expect_eq "AAAA: before any question, [::1]:$P is refused (connect6)" EPERM "$(conn ::1 "$P")"
expect_eq "AAAA: v6.test resolves to ::1" "NOERROR ::1" "$(q 192.0.2.53 53 v6.test AAAA)"
expect_eq "AAAA: [::1]:$P connects (connect6)" ok "$(conn ::1 "$P")"
expect_eq "AAAA: ::1 on another port is refused" EPERM "$(conn ::1 $((P == 65535 ? P - 1 : P + 1)))"
expect_eq "AAAA: v6.test has no A record (NOERROR, no address)" "NOERROR " "$(q 192.0.2.53 53 v6.test A)"
expect_eq "AAAA: asked over TCP of a v6 server, steered and answered the same" "NOERROR ::1" \
	"$(q 2001:db8::53 53 v6.test AAAA tcp)"
expect_eq "AAAA: the system resolver (getaddrinfo, AF_INET6) gets the answer" ::1 \
	"$(cg_run "$cg" "$DT" resolve v6.test inet6)"
expect_eq "AAAA: ... and [::1]:$P connects" ok "$(conn ::1 "$P")"

sed -i 's/^moving.test A 127.0.0.6 1$/moving.test A 127.0.0.7 60/' "$ZONE"
# TTL 1 + the grace (2 s)
sleep 3.5
expect_eq "after its TTL, allowed.test's address is refused again" EPERM "$(conn 127.0.0.2 "$P")"
expect_eq "AAAA: after its TTL, [::1]:$P is refused again" EPERM "$(conn ::1 "$P")"
expect_eq "the moved name resolves to its new address" "NOERROR 127.0.0.7" "$(q 192.0.2.53 53 moving.test)"
expect_eq "the new address connects" ok "$(conn 127.0.0.7 "$P")"
expect_eq "the old address has expired" EPERM "$(conn 127.0.0.6 "$P")"
expect_eq "a name asked again opens its address again" "NOERROR 127.0.0.2" "$(q 192.0.2.53 53 allowed.test)"
expect_eq "... and it connects" ok "$(conn 127.0.0.2 "$P")"

# ---- IPv6 and IPv4-mapped questions: connect6/sendmsg6/recvmsg6 ----
expect_eq "IPv6: a question to a v6 server is steered (the answer's source is the server asked)" \
	"NOERROR 127.0.0.5" "$(q 2001:db8::53 53 a.wild.test)"
expect_eq "IPv6: over TCP, steered and answered the same" "NOERROR 127.0.0.5" \
	"$(q 2001:db8::53 53 a.wild.test A tcp)"
expect_eq "IPv4-mapped: a question to ::ffff:192.0.2.53 is steered" "NOERROR 127.0.0.5" \
	"$(q ::ffff:192.0.2.53 53 a.wild.test)"
expect_eq "IPv6: a name no rule allows gets REFUSED" "REFUSED " "$(q 2001:db8::53 53 denied.test)"

# ---- a second session: its resolver's port is not the first one's to use ----
pol2=$(policy_file other "{\"kwitness_policy\":1,\"mode\":\"enforce\",\"net\":{\"connect\":[\"allowed.test:$P\"],\"dns\":{\"resolvers\":[\"127.0.0.1:1\"],\"allow_other_names\":true}}}")
cg2=$(cg_make other)
sid2=$(session_open "$cg2" "$pol2")
if [ -z "$sid2" ]; then
	not_ok "a second session opens"
else
	r2=$(cg_run "$cg2" "$DT" query 192.0.2.53 53 allowed.test)
	expect_eq "an upstream that does not answer: SERVFAIL" "SERVFAIL " "$r2"
	expect_eq "... and nothing opened" EPERM "$(cg_run "$cg2" "$NP" connect 127.0.0.2 "$P")"
	# this collector's resolver sockets on 127.0.0.1: one per session
	port2=$(ss -Hunlp src 127.0.0.1 | grep "pid=$KT_DPID," | awk '{ print $4 }' | sed 's/.*://')
	bad=
	for pp in $port2; do
		res=$(q 127.0.0.1 "$pp" allowed.test)
		# its own resolver answers it; another session's refuses it in the kernel
		case $res in "NOERROR 127.0.0.2"|EPERM) ;; *) bad="$bad $pp:$res" ;; esac
	done
	n_eperm=0
	for pp in $port2; do [ "$(q 127.0.0.1 "$pp" allowed.test)" = EPERM ] && n_eperm=$((n_eperm + 1)); done
	expect_eq "asking a resolver port directly: its own answers, another session's is refused (EPERM)" "" "$bad"
	expect_eq "at least one resolver port was another session's" 1 $((n_eperm > 0))
	session_close "$sid2" >/dev/null || not_ok "the second session closes"
	expect_eq "the second session's dns.query records the SERVFAIL" 1 \
		"$(grep -c '"rcode":"SERVFAIL"' "$LOG")"
fi

# ---- allow_other_names: other names resolve, and open nothing ----
pol4=$(policy_file others "{\"kwitness_policy\":1,\"mode\":\"enforce\",\"net\":{\"connect\":[\"allowed.test:$P\"],\"dns\":{\"resolvers\":[\"127.0.0.1:$DNSP\"],\"allow_other_names\":true}}}")
cg4=$(cg_make others)
sid4=$(session_open "$cg4" "$pol4")
if [ -z "$sid4" ]; then
	not_ok "a session with allow_other_names opens"
else
	expect_eq "allow_other_names: denied.test resolves" "NOERROR 127.0.0.3" \
		"$(cg_run "$cg4" "$DT" query 192.0.2.53 53 denied.test)"
	expect_eq "allow_other_names: its address is still refused (EPERM)" EPERM \
		"$(cg_run "$cg4" "$NP" connect 127.0.0.3 "$P")"
	session_close "$sid4" >/dev/null || not_ok "the allow_other_names session closes"
	other=$(grep '"name":"denied.test"' "$LOG")
	expect_eq "allow_other_names: its dns.query is a permit by that rule, opening nothing" \
		"permit net.dns.allow_other_names 0" \
		"$(jfield "$other" decision) $(jfield "$other" rule) $(jfield "$other" answers | grep -c 127.0.0.3)"
	check "the allow_other_names record verifies" verify_record
fi

# ---- an explicit CIDR deny beats a name (docs/policy.md) ----
echo "cidr.test A 127.0.0.2 60" >>"$ZONE"
pol5=$(policy_file cidr "{\"kwitness_policy\":1,\"mode\":\"enforce\",\"net\":{\"connect\":[\"!127.0.0.2/32:*\",\"cidr.test:$P\",\"*.wild.test:$P\"],\"dns\":{\"resolvers\":[\"127.0.0.1:$DNSP\"]}}}")
cg5=$(cg_make cidr)
sid5=$(session_open "$cg5" "$pol5")
if [ -z "$sid5" ]; then
	not_ok "a session with a CIDR deny beside names opens"
else
	expect_eq "CIDR deny: cidr.test resolves (the name is allowed)" "NOERROR 127.0.0.2" \
		"$(cg_run "$cg5" "$DT" query 192.0.2.53 53 cidr.test)"
	expect_eq "CIDR deny: its address, which !127.0.0.2/32 names, stays refused (EPERM)" EPERM \
		"$(cg_run "$cg5" "$NP" connect 127.0.0.2 "$P")"
	expect_eq "CIDR deny: a name's address no CIDR rule denies connects (the names work here)" \
		"NOERROR 127.0.0.5 ok" \
		"$(cg_run "$cg5" "$DT" query 192.0.2.53 53 a.wild.test) $(cg_run "$cg5" "$NP" connect 127.0.0.5 "$P")"
	session_close "$sid5" >/dev/null || not_ok "the CIDR deny session closes"
	cq=$(grep '"tool":"dns.query"' "$LOG" | grep '"name":"cidr.test"')
	expect_eq "CIDR deny: the question is a permit by the name rule that opened 127.0.0.2" \
		"permit net.connect[1] 127.0.0.2=60" \
		"$(jfield "$cq" decision) $(jfield "$cq" rule) $(jfield "$cq" answers)"
	cc=$(grep '"tool":"net.connect"' "$LOG" | grep '"host":"127.0.0.2"')
	expect_eq "CIDR deny: the connect is one deny by the CIDR rule, naming no question" \
		"1 deny net.connect[0] true " \
		"$(grep -c . <<<"$cc") $(jfield "$cc" decision) $(jfield "$cc" rule) $(jfield "$cc" enforced) $(jfield "$cc" via)"
	check "the CIDR deny record verifies" verify_record
fi

# ---- a full session: new addresses are not opened, and logged ----
for n in $(seq 17); do for x in $(seq 32); do echo "n$n.many.test A 127.1.$n.$x 60"; done; done >>"$ZONE"
pol3=$(policy_file many "{\"kwitness_policy\":1,\"mode\":\"enforce\",\"net\":{\"connect\":[\"*.many.test:$P\"],\"dns\":{\"resolvers\":[\"127.0.0.1:$DNSP\"]}}}")
cg3=$(cg_make many)
sid3=$(session_open "$cg3" "$pol3")
if [ -z "$sid3" ]; then
	not_ok "a third session opens"
else
	bad=
	for n in $(seq 17); do
		r=$(cg_run "$cg3" "$DT" query 192.0.2.53 53 "n$n.many.test")
		[ "$(grep -o , <<<"$r" | wc -l)" = 31 ] && [ "${r%% *}" = NOERROR ] || bad="$bad n$n:${r:0:20}"
	done
	expect_eq "17 names of 32 addresses each are answered" "" "$bad"
	expect_eq "an address of the 16th name (512 open: the bound) is open (the kernel lets it through)" \
		ECONNREFUSED "$(cg_run "$cg3" "$NP" connect 127.1.16.32 "$P")"
	expect_eq "an address of the 17th name (past the bound) is refused" EPERM \
		"$(cg_run "$cg3" "$NP" connect 127.1.17.1 "$P")"
	session_close "$sid3" >/dev/null || not_ok "the third session closes"
	full=$(grep '"name":"n17.many.test"' "$LOG")
	expect_eq "the 17th answer: nothing opened, its 32 addresses listed under not_opened" "0 32" \
		"$(jfield "$full" answers | grep -c . ) $(jfield "$full" not_opened | tr ',' '\n' | grep -c .)"
	check "the third record verifies" verify_record
fi

# ---- the log ----
session_close "$sid" >/dev/null || kt_fail_all "the session closes"
check "the record verifies with its log and bundle (kwitness verify --log)" verify_record
"$KW" report --html "$KT_TMP/report.html" --key "$KT_TMP/signer.jwk" "$REC" --log "$LOG" --policy "$POL" >"$KT_TMP/report.txt" 2>&1
expect_eq "the report shows the connect an answer opened, with its name" 1 \
	"$(grep -c "127.0.0.2:$P/tcp via allowed.test" "$KT_TMP/report.html" | awk '{ print ($1 > 0) }')"
dq=$(grep '"tool":"dns.query"' "$LOG")
expect_eq "every question is a dns.query entry from the collector" \
	"$(grep -c . <<<"$dq")" "$(grep -c '"source":"collector"' <<<"$dq")"
refused=$(grep '"name":"denied.test"' <<<"$dq" | head -n 1)
expect_eq "denied.test: a deny by the default rule" "deny net.dns:default REFUSED true" \
	"$(jfield "$refused" decision) $(jfield "$refused" rule) $(jfield "$refused" rcode) $(jfield "$refused" enforced)"
first=$(grep '"name":"allowed.test"' <<<"$dq" | head -1)
expect_eq "allowed.test: permitted by net.connect[0], answered, address opened with its TTL" \
	"permit net.connect[0] NOERROR 127.0.0.2=1" \
	"$(jfield "$first" decision) $(jfield "$first" rule) $(jfield "$first" rcode) $(jfield "$first" answers)"
cdn=$(grep '"name":"cdn.test"' <<<"$dq")
expect_eq "cdn.test: its CNAME chain is in the entry" "edge.cdn-provider.test 127.0.0.4=60" \
	"$(jfield "$cdn" cnames) $(jfield "$cdn" answers)"
v6q=$(grep '"name":"v6.test"' <<<"$dq" | grep '"qtype":"AAAA"' | head -1)
expect_eq "v6.test: its AAAA question, permitted by net.connect[4], opened ::1 with its TTL" \
	"permit net.connect[4] NOERROR ::1=1" \
	"$(jfield "$v6q" decision) $(jfield "$v6q" rule) $(jfield "$v6q" rcode) $(jfield "$v6q" answers)"
v6early=$(grep '"tool":"net.connect"' "$LOG" | grep '"host":"::1"' | head -1)
expect_eq "the connect6 to ::1 before any question: denied by default, no via" \
	"deny net.connect:default " \
	"$(jfield "$v6early" decision) $(jfield "$v6early" rule) $(jfield "$v6early" via)"
v6via=$(grep '"tool":"net.connect"' "$LOG" | grep '"host":"::1"' | grep '"decision":"permit"' | head -1)
expect_eq "the first permitted connect6 to ::1 names its AAAA question (via, via_seq)" \
	"v6.test $(jfield "$v6q" seq) net.connect[4]" \
	"$(jfield "$v6via" via) $(jfield "$v6via" via_seq) $(jfield "$v6via" rule)"
tcpq=$(grep '"proto":"tcp"' <<<"$dq" | grep -c '"name":"allowed.test"')
expect_eq "the TCP question is logged as tcp" 1 "$tcpq"
seq1=$(jfield "$first" seq)
via=$(grep '"tool":"net.connect"' "$LOG" | grep '"host":"127.0.0.2"' | grep '"decision":"permit"' | head -1)
expect_eq "the first permitted connect to 127.0.0.2 names its query (via, via_seq)" \
	"allowed.test $seq1 net.connect[0]" \
	"$(jfield "$via" via) $(jfield "$via" via_seq) $(jfield "$via" rule)"
expect_eq "... and comes after it in the log" 1 $(( $(jfield "$via" seq) > seq1 ))
early=$(grep '"tool":"net.connect"' "$LOG" | grep '"host":"127.0.0.2"' | head -1)
expect_eq "the connect before any question: denied by default, no via" "deny net.connect:default " \
	"$(jfield "$early" decision) $(jfield "$early" rule) $(jfield "$early" via)"
expect_eq "seq numbers run without a gap or a duplicate" \
	"$(grep -c '"seq":' "$LOG")" \
	"$(grep -o '"seq":[0-9]*' "$LOG" | sort -u | wc -l)"
max=$(grep -o '"seq":[0-9]*' "$LOG" | cut -d: -f2 | sort -n | tail -1)
expect_eq "... from 0 to the last" "$((max + 1))" "$(grep -c '"seq":' "$LOG")"
finish
