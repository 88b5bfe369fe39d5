#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# All of the network is governed once any of it is: under a policy with a net
# list, raw, ping and (with BPF-LSM) packet sockets are refused with EPERM and
# recorded unless net.socket names them (inet:raw, inet:icmp, packet); a plain
# "inet" means stream and datagram only; a connected UDP socket is judged by
# net.send at connect().
# Never a datagram that left without a log entry.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kwd_lib.sh"

kwd_require
kwd_start
listeners_start

kwd_has_hook net.socket || kt_skip_all "the net.socket hook is unavailable on this kernel"

# $in_netns CMD...: CMD in a new network namespace with lo up and ping sockets
# allowed for every group (ping_group_range is per namespace, so the host's
# stays untouched). The cgroup, and so the session, stays the same.
in_netns=$KT_TMP/in_netns.sh
cat >"$in_netns" <<'EOF'
exec unshare -n sh -c 'ip link set lo up && echo "0 2147483647" >/proc/sys/net/ipv4/ping_group_range && exec "$@"' sh "$@"
EOF

# escape NAME POLICY_NET PROBE WANT_RESULT FIELDS: one operation in a fresh
# session; WANT_RESULT is kw-netprobe's answer; FIELDS the one entry its pid
# must have ("" : no entry at all).
escape() {
	local name=$1 net=$2 probe=$3 want=$4 fields=$5 cg sid out pid res line n
	if ! policy_session "esc-$name" enforce deny "\"net\":$net"; then
		not_ok "$name: session opens"
		return
	fi
	# shellcheck disable=SC2086
	out=$(cg_run "$cg" sh -c 'echo $$; exec "$@"' sh $probe)
	pid=$(sed -n 1p <<<"$out") res=$(sed -n 2p <<<"$out")
	if ! session_close "$sid" >/dev/null; then
		not_ok "$name: session closes"
		return
	fi
	expect_eq "$name: $probe -> $want" "$want" "$res"
	line=$(decisions "$LOG" | grep "\"pid\":$pid,")
	n=$(grep -c . <<<"$line")
	if [ -z "$fields" ]; then
		expect_eq "$name: no entry" 0 "$n"
	elif [ "$n" -ne 1 ]; then
		not_ok "$name: one entry for the attempt (found $n)"
		echo "# $line"
	else
		check_entry "$name: entry" "$line" "$fields" "$cg"
	fi
	expect_eq "$name: trailer complete" true "$(jfield "$(trailer "$LOG")" complete)"
	check "$name: record verifies" verify_record
}

SENDONLY='{"connect":[],"send":[]}'
DENY_RAW="tool=net.socket;decision=deny;enforced=true;family=inet;type=raw;rule=net.socket:default"
DENY_PING="tool=net.socket;decision=deny;enforced=true;family=inet;type=dgram;protocol=1;rule=net.socket:default"

# The review's case: connect and send lists, no net.socket.
escape raw-sendonly "$SENDONLY" "$NP rawsend 127.0.0.1 $LPORT_A" EPERM "$DENY_RAW"
escape ping-sendonly "$SENDONLY" "sh $in_netns $NP ping 127.0.0.1" EPERM "$DENY_PING"
# A plain "inet" is stream and datagram only.
escape raw-plain-inet '{"socket":["inet"]}' "$NP rawsend 127.0.0.1 $LPORT_A" EPERM "$DENY_RAW"
escape ping-plain-inet '{"socket":["inet"]}' "sh $in_netns $NP ping 127.0.0.1" EPERM "$DENY_PING"
# Named explicitly, they are allowed and recorded with their rule.
escape raw-named '{"socket":["inet","inet:raw"]}' "$NP rawsend 127.0.0.1 $LPORT_A" ok \
	"tool=net.socket;decision=permit;type=raw;rule=net.socket[1]"
escape ping-named '{"socket":["inet","inet:icmp"]}' "sh $in_netns $NP ping 127.0.0.1" ok \
	"tool=net.socket;decision=permit;protocol=1;rule=net.socket[1]"
# Connected UDP under a send-only policy: connect() is a net.send decision.
escape udpconnect-send '{"send":[]}' "$NP udpconnect 127.0.0.1 $LPORT_A" EPERM \
	"tool=net.send;decision=deny;enforced=true;host=127.0.0.1;port=$LPORT_A;proto=udp;rule=net.send:default"
escape udpconnect-send-allowed "{\"send\":[\"127.0.0.1/32:$LPORT_A\"]}" \
	"$NP udpconnect 127.0.0.1 $LPORT_A" ok \
	"tool=net.send;decision=permit;host=127.0.0.1;port=$LPORT_A;proto=udp;rule=net.send[0]"
# Implicit socket governance decides only what it refuses: a TCP connect under
# a connect list records its connect and nothing for the socket.
escape tcp-implicit "{\"connect\":[\"127.0.0.1/32:$LPORT_A\"]}" "$NP connect 127.0.0.1 $LPORT_A" ok \
	"tool=net.connect;decision=permit;rule=net.connect[0]"

# AF_PACKET never reaches cgroup/sock_create (inet and inet6 only). Where
# BPF-LSM works, lsm/socket_create decides it under net.socket ("packet");
# elsewhere `kwitness probe` and docs/policy.md name it as a limit.
DENY_PACKET="tool=net.socket;decision=deny;enforced=true;family=packet;type=dgram;rule=net.socket:default"
if kwd_has_hook net.unix; then
	escape packet-sendonly "$SENDONLY" "$NP packetsend" EPERM "$DENY_PACKET"
	escape packet-plain-inet '{"socket":["inet"]}' "$NP packetsend" EPERM "$DENY_PACKET"
	escape packet-named '{"socket":["inet","packet"]}' "$NP packetsend" ok \
		"tool=net.socket;decision=permit;family=packet;type=dgram;rule=net.socket[1]"
else
	skip_feature lsm.unix "no BPF-LSM here: packet sockets are not decided (kwitness probe names AF_PACKET)"
fi
# What holds everywhere: an unprivileged sandbox (kwitness run's default) has
# no CAP_NET_RAW, and the kernel refuses the socket.
if policy_session esc-packet enforce deny "\"net\":$SENDONLY"; then
	res=$(cg_run "$cg" "$(command -v setpriv)" --reuid=65534 --regid=65534 --clear-groups "$NP" packetsend)
	session_close "$sid" >/dev/null
	expect_eq "packet: unprivileged sandbox cannot open AF_PACKET" EPERM "$res"
else
	not_ok "packet: session opens"
fi

check "kwitnessd is still running" kwd_alive
finish
