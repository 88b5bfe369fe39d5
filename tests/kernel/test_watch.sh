#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kwitness watch: a watcher sees every entry of a 100,000-decision session, in
# order, byte for byte the log's lines, with the log's seqs; a stalled watcher
# (SIGSTOP) is told how many it missed and the log loses nothing; a non-root
# watcher sees nothing of root's sessions. Then the OCSF view of the live
# stream and of the stored log (tests/helpers/ocsf_check.py).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kwd_lib.sh"

kwd_require
kt_user_add kww
chmod 711 "$KT_TMP"
# a watcher's queue of 50,000 entries: the stalled one below must miss
printf 'group = %s\nwatch_queue = 50000\n' "$KT_GROUP" >"$KT_TMP/kwitnessd.conf"
# 16 MiB ring buffers: 100,000 events fit even if the collector fell behind,
# so a miss can only be the watcher's
kwd_start --ringbuf-size 16777216 --config "$KT_TMP/kwitnessd.conf"
kwd_has_hook net.send || kt_skip_feature net.send "net.send hooks unavailable on this kernel"
listeners_start
PORT=$LPORT_A
N=100000
SETPRIV=$(command -v setpriv) || kt_skip_all "setpriv missing"
as_user() { "$SETPRIV" --reuid="$U" --regid="$G" --init-groups "$@"; }

# wait_watchers N: until kwitnessd has taken N watchers in all (its log says so).
wait_watchers() {
	for _ in $(seq 200); do
		[ "$(grep -c 'watch: uid' "$KT_TMP/kwitnessd.log")" -ge "$1" ] && return 0
		sleep 0.05
	done
	return 1
}
# stream_entries FILE: the "entry" of each stream line, compact, as sent.
stream_entries() { sed -n 's/^{"entry":\(.*\),"seq":[0-9]*,"session":"[0-9a-f]*"}$/\1/p; s/^{"entry":\(.*\),"session":"[0-9a-f]*"}$/\1/p' "$1"; }

SEND="\"net\":{\"send\":[\"127.0.0.1/32:$PORT\"]}"

# ---- a watcher follows a 100,000-decision session -------------------------
policy_session watch1 enforce allow "$SEND" || kt_fail_all "session opens"
sid1=$sid cg1=$cg
# the user's watcher of every session it may see, and root's of this one
as_user "$KW" watch --all --json --socket "$KT_SOCK" >"$KT_TMP/user.out" 2>"$KT_TMP/user.err" &
UPID=$!
"$KW" watch --session "$sid1" --json --socket "$KT_SOCK" >"$KT_TMP/w1.out" 2>"$KT_TMP/w1.err" &
WPID=$!
"$KW" watch --session "$sid1" --format ocsf --socket "$KT_SOCK" >"$KT_TMP/w1.ocsf" 2>"$KT_TMP/w1o.err" &
OPID=$!
wait_watchers 3 || kt_fail_all "kwitnessd did not take the watchers"
out=$(as_user "$KW" watch --session "$sid1" --socket "$KT_SOCK" 2>&1)
expect_eq "user watch --session of root's: refused" forbidden_session \
	"$(sed -n 's/^kwitness watch: \([a-z_]*\): .*/\1/p' <<<"$out")"
out=$(cg_run "$cg1" "$NP" flood sendto 127.0.0.1 $PORT $N)
echo "# flood: $out"
session_close "$sid1" >/dev/null
LOG1=$LOG REC1=$REC
kwd_gone "$WPID" 600 && wait "$WPID"
expect_eq "watch --session: ends with the session (exit 0)" 0 "$?"
logged=$(decisions "$LOG1" | grep -c .)
expect_eq "the log holds every decision" "$N" "$logged"
# the watcher joined after the open entry: it sees every line after it
tail -n +2 "$LOG1" >"$KT_TMP/log1.tail"
stream_entries "$KT_TMP/w1.out" >"$KT_TMP/w1.entries"
expect_eq "watch: as many entries as the log after its open entry" \
	"$(wc -l <"$KT_TMP/log1.tail")" "$(wc -l <"$KT_TMP/w1.entries")"
check "watch: every entry byte for byte the log's line, in the log's order" \
	cmp -s "$KT_TMP/log1.tail" "$KT_TMP/w1.entries"
# each stream line's seq is its entry's seq, and they run 0..N-1
jq -r 'select(.entry) | select(.seq != null) | "\(.seq) \(.entry.seq)"' "$KT_TMP/w1.out" >"$KT_TMP/w1.seqs"
expect_eq "watch: each line's seq is its entry's" 0 "$(awk '$1 != $2' "$KT_TMP/w1.seqs" | wc -l)"
# (the proc entries of the flood's process are numbered with its decisions)
n=$(numbered "$LOG1" | grep -c .)
expect_eq "watch: seqs 0..n-1 in order ($N decisions and the proc entries)" \
	"$(seq 0 $((n - 1)) | md5sum)" "$(cut -d' ' -f1 "$KT_TMP/w1.seqs" | md5sum)"
expect_eq "watch: nothing missed" 0 "$(grep -c '"missed"' "$KT_TMP/w1.out")"
expect_eq "watch: the stream ends with its end line" '{"end":true,"missed_total":0}' "$(tail -1 "$KT_TMP/w1.out")"
# the same stream as OCSF (made by the watcher, so it may fall behind and
# miss some): Network Activity events, valid, in seq order, and with what
# it was told it missed, one per decision
kwd_gone "$OPID" 600
got=$(wc -l <"$KT_TMP/w1.ocsf")
said=$(sed -n 's/.*missed \([0-9]*\) entries.*/\1/p' "$KT_TMP/w1o.err" | awk '{ n += $1 } END { print n + 0 }')
echo "# watch --format ocsf: $got events, told it missed $said"
expect_eq "watch --format ocsf: events + missed == decisions" "$N" "$((got + said))"
out=$(python3 "$KW_ROOT/tests/helpers/ocsf_check.py" "$KW_ROOT/tests/vectors/ocsf" "$KT_TMP/w1.ocsf" --classes 4001)
expect_eq "watch --format ocsf: every event valid against the schema copy" 0 "$?"
echo "$out" | tail -3 | sed 's/^/# /'
expect_eq "watch --format ocsf: metadata.sequence increasing, each its raw_data's seq" 0 \
	"$(jq -r '"\(.metadata.sequence) \(.raw_data | fromjson | .seq)"' "$KT_TMP/w1.ocsf" |
		awk '$1 != $2 || (NR > 1 && $1 <= last) { bad++ } { last = $1 } END { print bad + 0 }')"

# ---- a non-root watcher sees nothing of root's session --------------------
expect_eq "user watch --all: none of root's entries" 0 "$(grep -c "$sid1" "$KT_TMP/user.out")"
check "user watch --all: still connected" kill -0 "$UPID"

# ---- a stalled watcher is told what it missed; the log loses nothing ------
policy_session watch2 enforce allow "$SEND" || kt_fail_all "session 2 opens"
sid2=$sid cg2=$cg
"$KW" watch --session "$sid2" --json --socket "$KT_SOCK" >"$KT_TMP/w2.out" 2>"$KT_TMP/w2.err" &
SPID=$!
wait_watchers 4 || kt_fail_all "kwitnessd did not take the stalled watcher"
kill -STOP "$SPID"
t0=$(date +%s%N)
out=$(cg_run "$cg2" "$NP" flood sendto 127.0.0.1 $PORT $N)
t1=$(date +%s%N)
echo "# flood with a stalled watcher: $out in $(((t1 - t0) / 1000000)) ms"
session_close "$sid2" >/dev/null
kill -CONT "$SPID"
kwd_gone "$SPID" 600
t=$(trailer "$LOG")
expect_eq "stalled: the log holds every decision" "$N" "$(decisions "$LOG" | grep -c .)"
expect_eq "stalled: the trailer says complete, nothing dropped" "true 0" \
	"$(jfield "$t" complete) $(jfield "$t" dropped)"
missed_total=$(tail -1 "$KT_TMP/w2.out" | jq -r '.missed_total')
got=$(stream_entries "$KT_TMP/w2.out" | wc -l)
said=$(jq -s '[.[] | .missed // 0] | add' "$KT_TMP/w2.out")
echo "# stalled watcher: got $got entries, told it missed $missed_total"
check "stalled: it missed entries ($missed_total)" test "${missed_total:-0}" -gt 0
expect_eq "stalled: the missed notices add up to the total" "$missed_total" "$said"
expect_eq "stalled: entries got + missed == the log's lines after open" \
	"$(($(wc -l <"$LOG") - 1))" "$((got + missed_total))"
check "stalled: its stderr says it missed entries" grep -q 'missed' "$KT_TMP/w2.err"

# the user's own session: its watcher sees it (so the none above is a filter)
ucg=$(cg_make usercg)
chown "$U" "$ucg" "$ucg/cgroup.procs"
upol=$(policy_file upol "{\"kwitness_policy\":1,\"mode\":\"enforce\",\"record\":\"all\",\"on_record_failure\":\"allow\",$SEND}")
chmod 644 "$upol"
usid=$(as_user "$KW" session open --socket "$KT_SOCK" --cgroup "$ucg" --policy "$upol" \
	--sandbox-id "spiffe://test.kwitness.local/u/$$" --image-digest "$DIGEST")
[ -n "$usid" ] || kt_fail_all "the user could not open a session"
cg_run "$ucg" "$NP" flood sendto 127.0.0.1 $PORT 10 >/dev/null
as_user "$KW" session close --socket "$KT_SOCK" "$usid" >/dev/null
for _ in $(seq 100); do grep -q "kwitness.close.*$usid" "$KT_TMP/user.out" && break; sleep 0.05; done
expect_eq "user watch --all: its own session's 10 decisions" 10 \
	"$(grep "\"session\":\"$usid\"" "$KT_TMP/user.out" | grep -c '"tool":"net.send"')"
kill "$UPID" 2>/dev/null
expect_eq "user watch --all: none of root's second session" 0 "$(grep -c "$sid2" "$KT_TMP/user.out")"
check "kwitnessd is still running" kwd_alive
finish
