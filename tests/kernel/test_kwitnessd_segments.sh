#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Log segments (docs/decision-log.md, "Segments"): with log_segment_bytes =
# 4K a session's log is cut into LOG, LOG.2, ... at line boundaries and the
# manifest LOG.segments lists each with its size and SHA-256; the record's
# transcript hash is the one of the concatenated lines (computed here
# independently), and verify (with the record, --dir, --log with the
# checkpoints), estate ingest and prune follow the segments. A segment
# removed, two reordered, one swapped for another file and the manifest
# removed each fail with their own reason code. A segmented session spans a
# restart with its pins kept: it is resumed (not sealed), its decisions
# from before, while down and after are all in the log, which is cut on
# and verifies (checkpoints spanning the restart), also from what a kill
# leaves (a torn last line; the last segment listed, the next not made); a
# segment changed while
# the collector was down leads to a seal, not a resume, and verify names
# the segment (segment_mismatch); a segment changed with its manifest line
# still fails the checkpoints signed before the stop: sealed, not resumed.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kwd_lib.sh"

kwd_require
command -v jq >/dev/null || kt_skip_all "jq missing"
command -v python3 >/dev/null || kt_skip_all "python3 missing"

printf 'log_segment_bytes = 4K\ncheckpoint_interval = 3600\ncheckpoint_entries = 200\n' \
	>"$KT_TMP/kwd.conf"
KT_SOCK=$KT_TMP/kwitnessd.sock
start_kwd() { # [PIN_DIR]: kwitnessd, its sessions pinned there (default: none)
	rm -f "$KT_SOCK"
	"$KWD" --foreground -v --state-dir "$KT_TMP/state" --socket "$KT_SOCK" \
		--key "$KT_TMP/key.pem" --pin-dir "${1:-none}" --config "$KT_TMP/kwd.conf" \
		2>>"$KT_TMP/kwitnessd.log" &
	KT_DPID=$!
	for _ in $(seq 600); do [ -S "$KT_SOCK" ] && break; kwd_alive || break; sleep 0.1; done
	[ -S "$KT_SOCK" ] || { sed 's/^/# /' "$KT_TMP/kwitnessd.log" | tail -5; kt_fail_all "kwitnessd did not start"; }
}
start_kwd
kwd_has_hook net.send || kt_skip_feature net.send "net.send hooks unavailable on this kernel"
listeners_start
KEY=$KT_TMP/signer.jwk

policy_session seg enforce deny "\"net\":{\"send\":[\"127.0.0.1/32:$LPORT_A\"]}" ||
	kt_fail_all "no session opened"
for _ in 1 2; do
	cg_run "$cg" "$NP" flood sendto 127.0.0.1 "$LPORT_A" 1000 >/dev/null
	sleep 0.2
done
session_close "$sid" >/dev/null || kt_fail_all "close failed"
MAN=$LOG.segments
nseg=$(wc -l <"$MAN")
nfiles=$(find "$(dirname "$LOG")" -name "$(basename "$LOG").[0-9]*" | wc -l)
check "the log was cut into segments ($nseg)" test "$nseg" -ge 10
expect_eq "the manifest lists segment 1 and every LOG.N file" "$nseg" "$((nfiles + 1))"
expect_eq "numbered 1..$nseg" "$(seq -s, "$nseg")" "$(jq -r .n "$MAN" | paste -sd,)"
seg_file() { if [ "$1" = 1 ]; then echo "$LOG"; else echo "$LOG.$1"; fi; }
bad=0
for i in $(seq "$nseg"); do
	f=$(seg_file "$i")
	want="$(jq -r "select(.n == $i) | \"\(.sha256) \(.bytes) \(.lines)\"" "$MAN")"
	got="sha256:$(sha256sum <"$f" | cut -d' ' -f1) $(stat -c %s "$f") $(wc -l <"$f")"
	[ "$want" = "$got" ] || { bad=$((bad + 1)); echo "# segment $i: manifest $want, file $got"; }
	[ "$(stat -c %s "$f")" -le 4096 ] || [ "$(wc -l <"$f")" = 1 ] ||
		{ bad=$((bad + 1)); echo "# segment $i is over 4 KiB with more than one line"; }
	[ "$(tail -c1 "$f" | od -An -c | tr -d ' ')" = '\n' ] || { bad=$((bad + 1)); echo "# segment $i ends inside a line"; }
done
expect_eq "each segment: its size, line count and SHA-256 as listed, at most 4 KiB (or one line), whole lines" 0 "$bad"
# The transcript over the concatenated lines, computed here: "[" + lines joined by "," + "]".
whole=$KT_TMP/whole.jsonl
for i in $(seq "$nseg"); do cat "$(seg_file "$i")"; done >"$whole"
want=$(python3 -c 'import hashlib,sys; l=open(sys.argv[1],"rb").read().split(b"\n")[:-1]; print("sha256:"+hashlib.sha256(b"["+b",".join(l)+b"]").hexdigest(), len(l))' "$whole")
expect_eq "the record's transcript is the one of the concatenated log" "$want" \
	"$(jq -r '"\(.tool_transcript.hash) \(.tool_transcript.call_count)"' "$REC")"
check "the close entry is in the last segment" grep -q '"tool":"kwitness.close"' "$(seg_file "$nseg")"

verify_json() { "$KW" verify --key "$KEY" --log "$1" --policy "$POL" "$REC" --json; }
j=$(verify_json "$LOG")
expect_eq "verify streams across the segments: valid" "true" "$(jq -r .valid <<<"$j")"
out=$("$KW" verify --key "$KEY" --log "$LOG" --policy "$POL" "$REC")
check "with the checkpoints, which span segments" grep -q "^checkpoints: lines 1-" <<<"$out"
j=$("$KW" verify --key "$KEY" --dir "$KT_TMP/state" --json | tail -n1)
expect_eq "verify --dir: the record verified, none invalid" "1 1 0" \
	"$(jq -r '.summary | "\(.records) \(.verified) \(.invalid)"' <<<"$j")"
j=$("$KW" verify --key "$KEY" --log "$LOG" --json)
expect_eq "verify --log (no record) with its checkpoints: through the last checkpoint" \
	"true $(tail -n1 "$LOG.checkpoints" | jq -r .lines)" "$(jq -r '"\(.valid) \(.vouched_lines)"' <<<"$j")"
j=$("$KW" verify --key "$KEY" --log "$whole" --checkpoints "$LOG.checkpoints" --policy "$POL" "$REC" --json)
expect_eq "the concatenation, unsplit, verifies too (segments are a storage split)" "true" \
	"$(jq -r .valid <<<"$j")"
ex() { "$KW" log export --format ocsf --record "$REC" "$1" | sha256sum; }
n_ev=$("$KW" log export --format ocsf --record "$REC" "$LOG" | wc -l)
check "log export reads every segment ($n_ev events)" test "$n_ev" -ge 2000
expect_eq "the same events as from the unsplit log" "$(ex "$whole")" "$(ex "$LOG")"
expect_eq "log tree: the same as from the unsplit log" "$("$KW" log tree "$whole" | sha256sum)" \
	"$("$KW" log tree "$LOG" | sha256sum)"
if python3 -c 'import cryptography' 2>/dev/null; then
	pyv() { PYTHONPATH=$KW_ROOT/clients/python python3 -c 'import sys
from kwitness.verify import verify
v = verify(sys.argv[1], sys.argv[2], log=sys.argv[3], policy=sys.argv[4])
print(v.valid, v.reason)' "$REC" "$KEY" "$1" "$POL"; }
	expect_eq "the Python client reads the segments in order" "True ok" "$(pyv "$LOG")"
else
	skip "the Python client: python3 cryptography missing"
fi

# --- tampered copies, each its own reason code ------------------------------
tamper() { # NAME: a copy of the log's files in $KT_TMP/NAME, its LOG path printed
	local d=$KT_TMP/$1
	mkdir -p "$d"
	cp "$LOG" "$LOG".* "$d/"
	echo "$d/$(basename "$LOG")"
}
reason() { jq -r .reason <<<"$(verify_json "$1")"; }
t=$(tamper missing); rm "$t.3"
expect_eq "segment 3 removed" segment_missing "$(reason "$t")"
t=$(tamper reordered); mv "$t.2" "$t.x"; mv "$t.3" "$t.2"; mv "$t.x" "$t.3"
expect_eq "segments 2 and 3 swapped" segment_reordered "$(reason "$t")"
t=$(tamper swapped); sed -i '1s/"pid":[0-9]*/"pid":1/' "$t.4"
expect_eq "segment 4 replaced by another file (one line changed)" segment_mismatch "$(reason "$t")"
t=$(tamper nomanifest); rm "$t.segments"
expect_eq "the manifest removed" segment_manifest_missing "$(reason "$t")"
t=$(tamper lastgone); rm "$t.$nseg"
expect_eq "the last segment removed" segment_missing "$(reason "$t")"
t=$(tamper unlisted); sed -i '$d' "$t.segments"; sed -i '$d' "$t.segments"; rm "$t.$((nseg - 1))"
expect_eq "a segment and its manifest line removed (and the last line, as if still open)" \
	segment_unlisted "$(reason "$t")"

# --- the open request's own size --------------------------------------------
one() { # SIZE: a session opened with --log-segment-bytes SIZE, flooded, closed; LOG set
	local c p s
	c=$(cg_make "seg$1")
	p=$(policy_file "seg$1" "{\"kwitness_policy\":1,\"mode\":\"enforce\",\"record\":\"all\",\"on_record_failure\":\"deny\",\"net\":{\"send\":[\"127.0.0.1/32:$LPORT_A\"]}}")
	s=$("$KW" session open --socket "$KT_SOCK" --cgroup "$c" --policy "$p" --image-digest "$DIGEST" \
		--sandbox-id "spiffe://test.kwitness.local/seg$1" --log-segment-bytes "$1") || return 1
	cg_run "$c" "$NP" flood sendto 127.0.0.1 "$LPORT_A" 300 >/dev/null
	session_close "$s" >/dev/null
}
SEGLOG=$LOG SEGREC=$REC SEGPOL=$POL
one 0 || kt_fail_all "no session with --log-segment-bytes 0"
check "--log-segment-bytes 0: one file (the config's 4K is overridden)" \
	test ! -e "$LOG.segments" -a ! -e "$LOG.2" -a "$(stat -c %s "$LOG")" -gt 8192
one 16K || kt_fail_all "no session with --log-segment-bytes 16K"
check "--log-segment-bytes 16K: segments of 16 KiB" test -e "$LOG.segments" -a "$(stat -c %s "$LOG")" -gt 4096 \
	-a "$(stat -c %s "$LOG")" -le 16384
expect_eq "... which verify" true "$(jq -r .valid <<<"$("$KW" verify --key "$KEY" --log "$LOG" --policy "$POL" "$REC" --json)")"
"$KW" session open --socket "$KT_SOCK" --cgroup "$cg" --policy "$SEGPOL" --image-digest "$DIGEST" \
	--sandbox-id x --log-segment-bytes 100 >/dev/null 2>"$KT_TMP/small.err"
check "--log-segment-bytes 100 is refused, saying the range" grep -q "4096 to 1T" "$KT_TMP/small.err"
LOG=$SEGLOG REC=$SEGREC POL=$SEGPOL

# --- estate ingest and prune follow the segments ---------------------------
mkdir -p "$KT_TMP/trust"
cp "$KEY" "$KT_TMP/trust/"
"$KW" estate ingest --create --db "sqlite:$KT_TMP/e.sqlite" --trust "$KT_TMP/trust" \
	"$KT_TMP/state" >"$KT_TMP/ingest.out" 2>&1
check "estate ingest stores the three sessions (two cut into segments), none rejected" \
	grep -q '^summary: 3 records: 3 stored (0 incomplete, .* 0 rejected' "$KT_TMP/ingest.out" ||
	sed 's/^/# /' "$KT_TMP/ingest.out"
touch -d '2 days ago' "$REC"
"$KW" prune --older-than 1d --state-dir "$KT_TMP/state" >"$KT_TMP/prune.out" 2>&1
left=$(find "$KT_TMP/state/logs" -name "$(basename "$LOG")*" | wc -l)
expect_eq "prune removes every segment, the manifest and the checkpoints with the record" 0 "$left"
check "and lists each segment it removed" grep -q "removed .*\.jsonl\.$nseg\$" "$KT_TMP/prune.out"

# --- the collector killed (no pins): the next one seals the segments as found -
policy_session pl enforce deny "\"net\":{\"send\":[\"127.0.0.1/32:$LPORT_A\"]}" ||
	kt_fail_all "no session opened"
cg_run "$cg" "$NP" flood sendto 127.0.0.1 "$LPORT_A" 500 >/dev/null
sleep 0.5
kill -KILL "$KT_DPID"
kwd_gone "$KT_DPID" 100
KT_DPID=
LOG=$KT_TMP/state/logs/$sid.jsonl REC=$KT_TMP/state/records/$sid.json
files=$(find "$(dirname "$LOG")" -name "$(basename "$LOG").[0-9]*" | wc -l)
expect_eq "killed: $((files + 1)) segments, the last one not listed" "$files" "$(wc -l <"$LOG.segments")"
start_kwd
for _ in $(seq 100); do [ -e "$REC" ] && break; sleep 0.1; done
files=$(find "$(dirname "$LOG")" -name "$(basename "$LOG").[0-9]*" | wc -l)
expect_eq "restarted: sealed, every segment listed (the sealed last one too)" "$((files + 1))" \
	"$(wc -l <"$LOG.segments")"
j=$("$KW" verify --key "$KEY" --log "$LOG" --allow-incomplete --json "$REC")
expect_eq "its record verifies across the segments, complete false" "true ok false" \
	"$(jq -r '"\(.valid) \(.reason) \(.complete)"' <<<"$j")"
check "the seal vouches from the last checkpoint" \
	grep -q "\"checkpoints\":$(wc -l <"$LOG.checkpoints"),.*\"tool\":\"kwitness.close\"" \
	"$LOG.$((files + 1))"

# --- a restart with the pins kept: the segmented session is resumed ---------
KT_PIN=/sys/fs/bpf/kwt-$$ # removed by kwd_cleanup
joined() { local i=1 f=$1; while [ -e "$f" ]; do cat "$f"; i=$((i + 1)); f=$1.$i; done; }
# flood_logged N: N sends, then until the joined log holds N more decisions (10 s at most)
flood_logged() {
	local want=$(($(joined "$LOG" | decisions /dev/stdin | wc -l) + $1))
	cg_run "$cg" "$NP" flood sendto 127.0.0.1 "$LPORT_A" "$1" >/dev/null
	for _ in $(seq 100); do
		[ "$(joined "$LOG" | decisions /dev/stdin | wc -l)" -ge "$want" ] && return 0
		sleep 0.1
	done
	echo "# fewer than $want decisions logged after 10 s"
}
# restart: SIGTERM (the pins stay), SENDS decisions while down, start again
restart() { # SENDS [CMD...]: CMD runs too while no collector does
	kwd_stop || not_ok "kwitnessd stopped within 30 s"
	[ "$1" = 0 ] || cg_run "$cg" "$NP" flood sendto 127.0.0.1 "$LPORT_A" "$1" >/dev/null
	shift
	"$@"
	start_kwd "$KT_PIN"
}
last_seg() { local n=$(($(wc -l <"$LOG.segments") + 1)); [ -e "$LOG.$n" ] && echo "$LOG.$n" || echo "$LOG"; }
# what a collector killed between a line and its newline leaves
torn_line() { printf '{"decision":"de' >>"$(last_seg)"; }
# what one killed between a cut's manifest line and the next file leaves
list_last() {
	local f n
	f=$(last_seg) n=$(($(wc -l <"$LOG.segments") + 1))
	printf '{"bytes":%s,"lines":%s,"n":%s,"sha256":"sha256:%s","type":"kwitness.segment"}\n' \
		"$(stat -c %s "$f")" "$(wc -l <"$f")" "$n" "$(sha256sum <"$f" | cut -d' ' -f1)" >>"$LOG.segments"
}
kwd_stop
start_kwd "$KT_PIN"
policy_session rs enforce deny "\"net\":{\"send\":[\"127.0.0.1/32:$LPORT_A\"]}" ||
	kt_fail_all "no session opened"
LOG=$KT_TMP/state/logs/$sid.jsonl
flood_logged 500
cut_before=$(wc -l <"$LOG.segments")
ck_before=$(wc -l <"$LOG.checkpoints")
restart 300
for _ in $(seq 100); do grep -q "session $sid resumed\|session $sid cannot be resumed" \
	"$KT_TMP/kwitnessd.log" && break; sleep 0.1; done
check "a segmented session is resumed after a restart with its pins kept" \
	grep -q "session $sid resumed" "$KT_TMP/kwitnessd.log" ||
	grep "session $sid" "$KT_TMP/kwitnessd.log" | sed 's/^/# /' | tail -3
flood_logged 500
restart 0 torn_line
wait_resumed() {
	for _ in $(seq 100); do [ "$(grep -c "session $sid resumed" "$KT_TMP/kwitnessd.log")" -ge "$1" ] && return 0; sleep 0.1; done
}
wait_resumed 2
check "a torn last line in the segment being written: resumed after its last whole line" \
	test "$(grep -c "session $sid resumed" "$KT_TMP/kwitnessd.log")" = 2
restart 0 list_last
wait_resumed 3
listed=$(wc -l <"$LOG.segments")
check "the manifest listing the last segment: resumed in a new one (segment $((listed + 1)))" \
	test "$(grep -c "session $sid resumed" "$KT_TMP/kwitnessd.log")" = 3 -a -e "$LOG.$((listed + 1))"
session_close "$sid" >/dev/null || not_ok "close of the resumed session"
nseg=$(wc -l <"$LOG.segments")
expect_eq "every segment listed once closed" "$nseg" \
	"$(($(find "$(dirname "$LOG")" -name "$(basename "$LOG").[0-9]*" | wc -l) + 1))"
check "the log was cut on after the resume ($cut_before listed before, $nseg after)" \
	test "$nseg" -gt "$((cut_before + 1))"
joined "$LOG" >"$KT_TMP/rs.jsonl"
expect_eq "three kwitness.resume entries, no seal" "3 0" \
	"$(grep -c '"tool":"kwitness.resume"' "$KT_TMP/rs.jsonl") $(grep -c '"sealed"' "$KT_TMP/rs.jsonl")"
expect_eq "before, while down and after: 1300 decisions, seq 0..n-1 without a gap" \
	"ok 1300" "$(numbered "$KT_TMP/rs.jsonl" | grep -o '"seq":[0-9]*' | cut -d: -f2 | sort -n |
		awk '{ if ($1 != NR - 1) bad = 1 } END { print (bad ? "gap" : "ok") }') $(decisions "$KT_TMP/rs.jsonl" | wc -l)"
expect_eq "the trailer: complete, nothing dropped" "true 0" \
	"$(jfield "$(trailer "$KT_TMP/rs.jsonl")" complete) $(jfield "$(trailer "$KT_TMP/rs.jsonl")" dropped)"
want=$(python3 -c 'import hashlib,sys; l=open(sys.argv[1],"rb").read().split(b"\n")[:-1]; print("sha256:"+hashlib.sha256(b"["+b",".join(l)+b"]").hexdigest(), len(l))' "$KT_TMP/rs.jsonl")
expect_eq "the record's transcript is the one of the concatenated log" "$want" \
	"$(jq -r '"\(.tool_transcript.hash) \(.tool_transcript.call_count)"' "$REC")"
out=$("$KW" verify --key "$KEY" --log "$LOG" --policy "$POL" "$REC")
check "the resumed record verifies across its segments" grep -q "^valid" <<<"$out" ||
	sed 's/^/# /' <<<"$out" | head -3
check "with checkpoints from before and after the restart ($ck_before before, $(wc -l <"$LOG.checkpoints") in all)" \
	test "$(wc -l <"$LOG.checkpoints")" -gt "$ck_before" -a "$ck_before" -ge 1
check "... one chain over the whole log" grep -q "^checkpoints: lines 1-" <<<"$out"
j=$("$KW" verify --key "$KEY" --dir "$KT_TMP/state" --allow-incomplete --json | tail -n1)
expect_eq "verify --dir: every record verifies, none invalid" "0" "$(jq -r .summary.invalid <<<"$j")"

# --- a segment changed while the collector was down: sealed, not resumed ----
policy_session tp enforce deny "\"net\":{\"send\":[\"127.0.0.1/32:$LPORT_A\"]}" ||
	kt_fail_all "no session opened"
LOG=$KT_TMP/state/logs/$sid.jsonl REC=$KT_TMP/state/records/$sid.json
flood_logged 500
kwd_stop || not_ok "kwitnessd stopped within 30 s"
sed -i '2s/"pid":[0-9]*/"pid":1/' "$LOG.2"
start_kwd "$KT_PIN"
for _ in $(seq 100); do [ -e "$REC" ] && break; sleep 0.1; done
check "the session with a changed segment is not resumed" \
	grep -q "session $sid cannot be resumed: .*segment 2 .*segment_mismatch" "$KT_TMP/kwitnessd.log"
joined "$LOG" >"$KT_TMP/tp.jsonl"
expect_eq "it is sealed as found, saying why (no resume entry)" "0 1" \
	"$(grep -c '"tool":"kwitness.resume"' "$KT_TMP/tp.jsonl") $(trailer "$KT_TMP/tp.jsonl" |
		grep -c '"sealed":"the session could not be resumed: segment 2 .*segment_mismatch')"
POL=$KT_TMP/state/policies/$(sed -n 's/.*"bundle_hash":"sha256:\([0-9a-f]*\)".*/\1/p' "$LOG" | head -1)
expect_eq "verify names the changed segment" segment_mismatch \
	"$(jq -r .reason <<<"$("$KW" verify --key "$KEY" --log "$LOG" --policy "$POL" "$REC" --json)")"
j=$("$KW" verify --key "$KEY" --dir "$KT_TMP/state" --allow-incomplete --json | tail -n1)
expect_eq "verify --dir: that record invalid, segment_mismatch" "1 1" \
	"$(jq -r '"\(.summary.invalid) \(.summary.reasons.segment_mismatch)"' <<<"$j")"

# --- a segment and its manifest line changed together while down: the
# checkpoints signed before the stop no longer match; sealed, not resumed --
policy_session tm enforce deny "\"net\":{\"send\":[\"127.0.0.1/32:$LPORT_A\"]}" ||
	kt_fail_all "no session opened"
LOG=$KT_TMP/state/logs/$sid.jsonl REC=$KT_TMP/state/records/$sid.json
flood_logged 500
kwd_stop || not_ok "kwitnessd stopped within 30 s"
sed -i '2s/"pid":[0-9]*/"pid":1/' "$LOG.2"
python3 - "$LOG" <<'PY'
import hashlib, json, sys
log = sys.argv[1]
lines = open(log + ".segments").read().splitlines()
seg = open(log + ".2", "rb").read()
m = json.loads(lines[1])
m.update(bytes=len(seg), lines=seg.count(b"\n"), sha256="sha256:" + hashlib.sha256(seg).hexdigest())
lines[1] = json.dumps(m, separators=(",", ":"), sort_keys=True)
open(log + ".segments", "w").write("\n".join(lines) + "\n")
PY
start_kwd "$KT_PIN"
for _ in $(seq 100); do [ -e "$REC" ] && break; sleep 0.1; done
check "segment and manifest changed together: not resumed, the checkpoints say why" \
	grep -q "session $sid cannot be resumed: the log no longer matches its checkpoints (checkpoint_prefix_mismatch)" \
	"$KT_TMP/kwitnessd.log"
joined "$LOG" >"$KT_TMP/tm.jsonl"
expect_eq "... sealed as found, vouching for nothing (no resume entry, no checkpoint named)" "0 1 0" \
	"$(grep -c '"tool":"kwitness.resume"' "$KT_TMP/tm.jsonl") $(trailer "$KT_TMP/tm.jsonl" |
		grep -c '"sealed":"the session could not be resumed: the log no longer matches') $(trailer \
		"$KT_TMP/tm.jsonl" | grep -c '"checkpoint":')"
POL=$KT_TMP/state/policies/$(sed -n 's/.*"bundle_hash":"sha256:\([0-9a-f]*\)".*/\1/p' "$LOG" | head -1)
expect_eq "verify: checkpoint_prefix_mismatch" checkpoint_prefix_mismatch \
	"$(jq -r .reason <<<"$("$KW" verify --key "$KEY" --log "$LOG" --policy "$POL" "$REC" --json)")"
finish
