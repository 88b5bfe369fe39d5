#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The resolver guard (docs/security.md, "DNS answers only kwitnessd gives"):
# attacks on the per-session resolver of egress by name, each of which must
# fail.
#  - forged answers: a root sandbox with only CAP_NET_RAW and
#    CAP_NET_BIND_SERVICE (Docker's defaults; host network) answers for the
#    upstream, sending every id to every socket that looks like kwitnessd's
#    upstream socket: nothing is opened, no connect is "via" the name, its
#    sends to the resolver's ports are refused and logged, and it gets no raw
#    socket even though its policy names "inet:raw";
#  - another session's resolver, asked through every local destination form,
#    from a session whose policy names no hosts and from one that does:
#    refused, and nothing in the other session's log;
#  - an upstream answer from another port or address than the question went
#    to: SERVFAIL, nothing opened;
#  - kwitnessd killed (sessions pinned): a local user binds the resolver's
#    ports and gets nothing, the sandbox's questions fail; a restarted
#    kwitnessd answers them again.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kwd_lib.sh"

DT=$KW_BUILD/tests/kw-dnstest
DA=$KW_BUILD/tests/kw-dnsattack
for b in "$DT" "$DA"; do [ -x "$b" ] || kt_fail_all "$b not built (make test-bins)"; done
# by absolute path: a busybox sh (the VM's) would run its own setpriv applet
SETPRIV=$(command -v setpriv) || kt_fail_all "setpriv not installed (util-linux)"
command -v ss >/dev/null || kt_fail_all "ss not installed (iproute2)"
kwd_require
KT_PIN=/sys/fs/bpf/kwt-$$
DNS_PID= TCP_PID= ASTRAY_PIDS=
guard_cleanup() {
	for p in $DNS_PID $TCP_PID $ASTRAY_PIDS; do kill "$p" 2>/dev/null; done
	kwd_cleanup
}
trap guard_cleanup EXIT

start_pinned() {
	kwd_start --pin-dir "$KT_PIN"
	for _ in $(seq 300); do
		"$KW" session list --socket "$KT_SOCK" >/dev/null 2>&1 && return 0
		kwd_alive || break
		sleep 0.05
	done
	kt_fail_all "kwitnessd does not answer"
}
start_pinned
kwd_has_hook net.dns || kt_skip_feature cgroup.net "the net.dns hooks (cgroup recvmsg, connect, sendmsg) are unavailable"

ZONE=$KT_TMP/zone
echo "allowed.test A 127.0.0.2 60" >"$ZONE"
"$DT" serve "$ZONE" "$KT_TMP/dns.port" &
DNS_PID=$!
"$DT" listen "$KT_TMP/tcp.port" 127.0.0.2 127.0.0.66 &
TCP_PID=$!
for _ in $(seq 50); do [ -s "$KT_TMP/dns.port" ] && [ -s "$KT_TMP/tcp.port" ] && break; sleep 0.1; done
DNSP=$(cat "$KT_TMP/dns.port") P=$(cat "$KT_TMP/tcp.port")
[ -n "$DNSP" ] && [ -n "$P" ] || kt_fail_all "the test DNS server or the TCP servers did not start"

# the collector's listeners on ADDR (127.0.0.1 or ::1) for proto (u or t), ports only
kwd_ports() { ss -H"$1"nlp src "$2" 2>/dev/null | grep "pid=$KT_DPID," | awk '{ print $4 }' | sed 's/.*://' | sort; }
names_policy() { # NAME RESOLVER [EXTRA]
	policy_file "$1" "{\"kwitness_policy\":1,\"mode\":\"enforce\",\"net\":{\"connect\":[\"allowed.test:$P\"],\"dns\":{\"resolvers\":[\"$2\"]}$3}}"
}
caps_run() { # CGROUP CMD...: root with only CAP_NET_RAW and CAP_NET_BIND_SERVICE
	local cg=$1
	shift
	cg_run "$cg" "$SETPRIV" --bounding-set=-all,+net_raw,+net_bind_service -- "$@"
}

# ---- forged answers from a root sandbox with CAP_NET_RAW + CAP_NET_BIND_SERVICE ----
# The upstream, 127.0.0.77:53, never answers: every answer is the attacker's
# (named twice: the question waits 3 s, two tries).
polf=$(names_policy forge '127.0.0.77:53","127.0.0.77:53' ',"socket":["inet","inet6","inet:raw","inet6:raw","packet"]')
cgf=$(cg_make forge)
sidf=$(session_open "$cgf" "$polf")
[ -n "$sidf" ] || kt_fail_all "a session with host names opens"
expect_eq "the sandbox has exactly CAP_NET_BIND_SERVICE and CAP_NET_RAW" 0000000000002400 \
	"$(caps_run "$cgf" sh -c 'sed -n "s/^CapEff:\t//p" /proc/self/status')"
# (the question over IPv6: the forger, which looks at every IPv4 socket, leaves
# the sandbox's own client alone)
caps_run "$cgf" sh -c '"$1" query 2001:db8::53 53 allowed.test >"$2" & sleep 0.2; "$3" forge 127.0.0.77 53 allowed.test 127.0.0.66 3 >"$4"; wait' \
	sh "$DT" "$KT_TMP/forge.q" "$DA" "$KT_TMP/forge.out"
echo "# forger: $(cat "$KT_TMP/forge.out")"
expect_eq "the question gets no forged answer (SERVFAIL: the upstream never answered)" "SERVFAIL " \
	"$(cat "$KT_TMP/forge.q")"
expect_eq "the forged address stays closed (EPERM)" EPERM "$(cg_run "$cgf" "$NP" connect 127.0.0.66 "$P")"
expect_eq "the forger's sends to the resolver's upstream socket were refused" 1 \
	"$(awk '{ print ($6 >= 1) }' "$KT_TMP/forge.out")"
expect_eq "no raw socket (IPPROTO_UDP), though the policy names inet:raw (EPERM)" EPERM \
	"$(caps_run "$cgf" "$NP" rawsend 127.0.0.1 9)"
if kwd_has_hook net.unix; then
	expect_eq "no packet socket, though the policy names packet (EPERM, lsm/socket_create)" EPERM \
		"$(caps_run "$cgf" "$NP" packetsend)"
else
	skip_feature lsm.unix "no BPF-LSM here: packet sockets are not decided (docs/security.md names the limit)"
fi
expect_eq "a stream socket still opens (only raw is the guard's)" ok "$(caps_run "$cgf" "$NP" socket inet stream)"
session_close "$sidf" >/dev/null || not_ok "the forge session closes"
lf=$LOG
expect_eq "no dns.query answer and no connect names the forged address" 0 \
	"$(grep '127.0.0.66' "$lf" | grep -c -e '"tool":"dns.query"' -e '"via"')"
g=$(grep '"rule":"net.dns:guard"' "$lf" | grep '"tool":"net.send"' | head -1)
expect_eq "the refused send is logged: a deny by net.dns:guard, enforced" "deny true 127.0.0.1" \
	"$(jfield "$g" decision) $(jfield "$g" enforced) $(jfield "$g" host)"
if kwd_has_hook net.unix; then
	expect_eq "the refused packet socket is logged by net.dns:guard" 1 \
		"$(grep '"rule":"net.dns:guard"' "$lf" | grep '"tool":"net.socket"' | grep -c '"family":"packet"')"
fi
r=$(grep '"rule":"net.dns:guard"' "$lf" | grep '"tool":"net.socket"' | head -1)
expect_eq "the refused raw socket is logged by net.dns:guard" "deny true" \
	"$(jfield "$r" decision) $(jfield "$r" enforced)"
check "the forge record verifies" verify_record

# ---- another session's resolver, through every local destination form ----
pola=$(names_policy victim "127.0.0.1:$DNSP")
cga=$(cg_make victim)
sida=$(session_open "$cga" "$pola")
[ -n "$sida" ] || kt_fail_all "the victim session opens"
AU4=$(kwd_ports u 127.0.0.1) AT4=$(kwd_ports t 127.0.0.1)
AU6=$(kwd_ports u '[::1]') AT6=$(kwd_ports t '[::1]')
[ "$(echo $AU4 $AT4 | wc -w)" = 2 ] || kt_fail_all "the victim's resolver listeners are not found ($AU4/$AT4)"
HOST4=$(ip -4 -o addr show scope global | awk '{ sub("/.*", "", $4); print $4; exit }')
# a session whose policy names no hosts, and whose rules permit every send
polb=$(policy_file nonames "{\"kwitness_policy\":1,\"mode\":\"enforce\",\"net\":{\"connect\":[\"0.0.0.0/0:*\",\"::/0:*\"],\"send\":[\"0.0.0.0/0:*\",\"::/0:*\"]}}")
cgb=$(cg_make nonames)
sidb=$(session_open "$cgb" "$polb")
polc=$(names_policy asker "127.0.0.1:$DNSP")
cgc=$(cg_make asker)
sidc=$(session_open "$cgc" "$polc")
[ -n "$sidb" ] && [ -n "$sidc" ] || kt_fail_all "the asking sessions open"
forms4="127.0.0.1 127.0.0.9 0.0.0.0 ::ffff:127.0.0.1 ::ffff:0.0.0.0 ${HOST4}"
for cg in "$cgb" "$cgc"; do
	[ "$cg" = "$cgb" ] && who="no host names" || who="host names"
	bad=
	for a in $forms4; do
		for proto in udp tcp; do
			[ $proto = udp ] && port=$AU4 || port=$AT4
			r=$(cg_run "$cg" "$DT" query "$a" "$port" allowed.test A $proto)
			[ "$r" = EPERM ] || bad="$bad $a/$proto:$r"
		done
	done
	if [ -n "$AU6" ]; then
		for a in ::1 ::; do
			for proto in udp tcp; do
				[ $proto = udp ] && port=$AU6 || port=$AT6
				r=$(cg_run "$cg" "$DT" query "$a" "$port" allowed.test A $proto)
				[ "$r" = EPERM ] || bad="$bad $a/$proto:$r"
			done
		done
	fi
	expect_eq "a session with $who asking the other's resolver ($forms4 ${AU6:+::1 ::}; udp, tcp): EPERM" "" "$bad"
done
expect_eq "the asking session's own DNS still works" "NOERROR 127.0.0.2" \
	"$(cg_run "$cgc" "$DT" query 0.0.0.0 53 allowed.test)"
session_close "$sida" >/dev/null || not_ok "the victim session closes"
expect_eq "nothing in the victim's log: no dns.query" 0 "$(grep -c '"tool":"dns.query"' "$LOG")"
session_close "$sidb" >/dev/null || not_ok "the no-names session closes"
g=$(grep '"rule":"net.dns:guard"' "$LOG" | grep '"host":"0.0.0.0"' | head -1)
expect_eq "the no-names session's refusal is in its own log (net.dns:guard)" deny "$(jfield "$g" decision)"
session_close "$sidc" >/dev/null || not_ok "the asking session closes"

# ---- an upstream that answers from where it was not asked ----
for how in port addr; do
	"$DA" astray "$KT_TMP/astray.$how" $how allowed.test 127.0.0.66 &
	ASTRAY_PIDS="$ASTRAY_PIDS $!"
done
for _ in $(seq 50); do [ -s "$KT_TMP/astray.port" ] && [ -s "$KT_TMP/astray.addr" ] && break; sleep 0.1; done
for how in port addr; do
	polu=$(names_policy "astray-$how" "127.0.0.1:$(cat "$KT_TMP/astray.$how")")
	cgu=$(cg_make "astray-$how")
	sidu=$(session_open "$cgu" "$polu")
	[ -n "$sidu" ] || { not_ok "the astray-$how session opens"; continue; }
	expect_eq "an answer from another $how than the upstream asked is dropped: SERVFAIL" "SERVFAIL " \
		"$(cg_run "$cgu" "$DT" query 192.0.2.53 53 allowed.test)"
	expect_eq "... and its address stays closed (EPERM)" EPERM "$(cg_run "$cgu" "$NP" connect 127.0.0.66 "$P")"
	session_close "$sidu" >/dev/null || not_ok "the astray-$how session closes"
done

# ---- kwitnessd down: nobody else receives or answers the sandbox's DNS ----
pold=$(names_policy down "127.0.0.1:$DNSP")
cgd=$(cg_make down)
sidd=$(session_open "$cgd" "$pold")
[ -n "$sidd" ] || kt_fail_all "the downtime session opens"
expect_eq "before: its DNS works" "NOERROR 127.0.0.2" "$(cg_run "$cgd" "$DT" query 192.0.2.53 53 allowed.test)"
DU=$(kwd_ports u 127.0.0.1) DTP=$(kwd_ports t 127.0.0.1)
{ kill -KILL "$KT_DPID"; wait "$KT_DPID"; } 2>/dev/null
KT_DPID=
nob() { "$SETPRIV" --reuid=65534 --regid=65534 --clear-groups "$@"; }
nob "$DA" catch udp 127.0.0.1 "$DU" 4 >"$KT_TMP/catch.udp" &
cu=$!
nob "$DA" catch tcp 127.0.0.1 "$DTP" 4 >"$KT_TMP/catch.tcp" &
ct=$!
sleep 0.5
qu=$(cg_run "$cgd" "$DT" query 192.0.2.53 53 allowed.test)
qt=$(cg_run "$cgd" "$DT" query 192.0.2.53 53 allowed.test A tcp)
wait $cu $ct
expect_eq "a local user bound the dead resolver's UDP and TCP ports and got nothing" "nothing nothing" \
	"$(cat "$KT_TMP/catch.udp") $(cat "$KT_TMP/catch.tcp")"
expect_eq "the sandbox's questions fail at once (EPERM), over UDP and TCP" "EPERM EPERM" "$qu $qt"
start_pinned
ok=
for _ in $(seq 50); do
	[ "$(cg_run "$cgd" "$DT" query 192.0.2.53 53 allowed.test)" = "NOERROR 127.0.0.2" ] && { ok=1; break; }
	sleep 0.2
done
expect_eq "a restarted kwitnessd answers the session's DNS again" 1 "$ok"
expect_eq "... over TCP too" "NOERROR 127.0.0.2" "$(cg_run "$cgd" "$DT" query 192.0.2.53 53 allowed.test A tcp)"
session_close "$sidd" >/dev/null || not_ok "the downtime session closes"
finish
