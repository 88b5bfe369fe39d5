#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kwitnessd, per hook family (connect4/6, sendmsg4/6, bind4/6, sock_create,
# dev, sysctl; connect6 also beside an IPv4 rule for the same port): an operation the policy does not allow, from a tagged cgroup,
# fails with EPERM under enforce and proceeds under advisory; its decision is
# in the log with the right fields; the record verifies with the log and the
# bundle; the same operation from an untagged process is untouched and not
# recorded.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kwd_lib.sh"

kwd_require
kwd_start

listeners_start
free_ports

have_v6=0
[ "$("$NP" bind ::1 0 2>/dev/null)" = ok ] && have_v6=1

# family NAME CLASS SECTION ALLOWED_OP DENIED_OP PERMITS TOOL FIELDS
#   ALLOWED_OP/DENIED_OP: kw-netprobe arguments; PERMITS: decisions the
#   allowed op records; FIELDS: "key=value;key=value" of the deny entry.
family() {
	local name=$1 class=$2 section=$3 allowed=$4 denied=$5 permits=$6 tool=$7 fields=$8
	local mode cg sid a out dpid dres upid ures line want n

	if ! kwd_has_hook "$class"; then
		skip_feature "$class" "$name: the $class hooks are unavailable on this kernel"
		return
	fi
	for mode in enforce advisory; do
		if ! policy_session "$name-$mode" "$mode" deny "$section"; then
			not_ok "$name/$mode: session opens"
			continue
		fi
		# shellcheck disable=SC2086
		a=$(cg_run "$cg" "$NP" $allowed)
		# shellcheck disable=SC2086
		out=$(cg_run "$cg" sh -c 'echo $$; exec "$@"' sh "$NP" $denied)
		dpid=$(sed -n 1p <<<"$out") dres=$(sed -n 2p <<<"$out")
		# shellcheck disable=SC2086
		out=$(sh -c 'echo $$; exec "$@"' sh "$NP" $denied)
		upid=$(sed -n 1p <<<"$out") ures=$(sed -n 2p <<<"$out")
		if ! session_close "$sid" >/dev/null; then
			not_ok "$name/$mode: session closes"
			continue
		fi
		expect_eq "$name/$mode: allowed operation proceeds" ok "$a"
		if [ $mode = enforce ]; then
			expect_eq "$name/$mode: denied operation fails with EPERM" EPERM "$dres"
		else
			expect_eq "$name/$mode: denied operation proceeds (advisory)" ok "$dres"
		fi
		expect_eq "$name/$mode: untagged process untouched" ok "$ures"
		line=$(decisions "$LOG" | grep "\"pid\":$dpid,")
		want="tool=$tool;decision=deny;enforced=$([ $mode = enforce ] && echo true || echo false);$fields"
		n=$(grep -c . <<<"$line")
		if [ -z "$line" ] || [ "$n" -ne 1 ]; then
			not_ok "$name/$mode: one decision entry for the denied operation (found $n)"
		else
			check_entry "$name/$mode: decision entry fields" "$line" "$want" "$cg"
		fi
		expect_eq "$name/$mode: untagged process not recorded" 0 \
			"$(decisions "$LOG" | grep -c "\"pid\":$upid,")"
		expect_eq "$name/$mode: decisions in the log" $((permits + 1)) \
			"$(decisions "$LOG" | grep -c .)"
		expect_eq "$name/$mode: trailer complete" true "$(jfield "$(trailer "$LOG")" complete)"
		check "$name/$mode: record verifies with log and bundle (kwitness verify)" verify_record
	done
}

# Whole-address rules for connect and bind, prefixes for send.
family connect4 net.connect "\"net\":{\"connect\":[\"127.0.0.1/32:$LPORT_A\"]}" \
	"connect 127.0.0.1 $LPORT_A" "connect 127.0.0.1 $LPORT_B" 1 net.connect \
	"host=127.0.0.1;port=$LPORT_B;proto=tcp;rule=net.connect:default"
family sendmsg4 net.send "\"net\":{\"send\":[\"127.0.0.0/8:$LPORT_A\"]}" \
	"sendto 127.0.0.1 $LPORT_A" "sendto 127.0.0.1 $LPORT_B" 1 net.send \
	"host=127.0.0.1;port=$LPORT_B;proto=udp;rule=net.send:default"
family bind4 net.bind "\"net\":{\"bind\":[\"127.0.0.1/32:$BPORT_A\"]}" \
	"bind 127.0.0.1 $BPORT_A" "bind 127.0.0.1 $BPORT_B" 1 net.bind \
	"host=127.0.0.1;port=$BPORT_B;proto=tcp;rule=net.bind:default"
if [ $have_v6 = 1 ]; then
	family connect6 net.connect "\"net\":{\"connect\":[\"::1/128:$LPORT_A\"]}" \
		"connect ::1 $LPORT_A" "connect ::1 $LPORT_B" 1 net.connect \
		"host=::1;port=$LPORT_B;proto=tcp;rule=net.connect:default"
	# IPv4 rules never apply to IPv6: 0.0.0.0/0 on port B leaves [::1]:B denied.
	family connect6-v4-rule net.connect \
		"\"net\":{\"connect\":[\"0.0.0.0/0:$LPORT_B\",\"::1/128:$LPORT_A\"]}" \
		"connect ::1 $LPORT_A" "connect ::1 $LPORT_B" 1 net.connect \
		"host=::1;port=$LPORT_B;proto=tcp;rule=net.connect:default"
	family sendmsg6 net.send "\"net\":{\"send\":[\"::/64:$LPORT_A\"]}" \
		"sendto ::1 $LPORT_A" "sendto ::1 $LPORT_B" 1 net.send \
		"host=::1;port=$LPORT_B;proto=udp;rule=net.send:default"
	family bind6 net.bind "\"net\":{\"bind\":[\"::1/128:$BPORT_A\"]}" \
		"bind ::1 $BPORT_A" "bind ::1 $BPORT_B" 1 net.bind \
		"host=::1;port=$BPORT_B;proto=tcp;rule=net.bind:default"
else
	skip "connect6, sendmsg6, bind6: no IPv6 loopback (::1)"
fi
family sock_create net.socket "\"net\":{\"socket\":[\"inet:stream\"]}" \
	"socket inet stream" "socket inet dgram" 1 net.socket \
	"family=inet;type=dgram;rule=net.socket:default"
family dev dev "\"dev\":{\"allow\":[\"c 1:3 rw\"]}" \
	"open /dev/null r" "open /dev/zero r" 1 dev.access \
	"dev=c 1:5;access=r;rule=dev.allow:default"
family sysctl sysctl "\"sysctl\":{\"write\":false}" \
	"sysctl kernel/printk_ratelimit" "sysctl kernel/printk_ratelimit -" 0 sysctl.write \
	"name=kernel/printk_ratelimit"

check "kwitnessd is still running" kwd_alive
finish
