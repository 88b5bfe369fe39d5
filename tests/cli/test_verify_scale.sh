#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kwitness verify at an auditor's scale: a decision log streamed in constant
# memory (a 2 GB log generated on the fly, never stored), the transcript hash
# against the collector's and an independent sha256sum, one byte flipped
# anywhere, bad input of every kind, --dir over 1,000 records with exact
# summary counts for --jobs 1 and 4, and progress on a terminal only.
# KW_BIG_LOG_BYTES sets the big log's size (default 2 GB; `make soak` may
# use more).
source "$(dirname "$0")/../lib.sh"

LOGGEN=$KW_BUILD/tests/kw-loggen
MAXRSS=$KW_BUILD/tests/kw-maxrss
if [ ! -x "$KW" ] || [ ! -x "$LOGGEN" ] || [ ! -x "$MAXRSS" ]; then
	skip "kwitness or the test helpers are not built"
	finish
fi
if ! command -v jq >/dev/null; then
	skip "jq missing (scripts/deps.sh installs it)"
	finish
fi

T=$(mktemp -d /tmp/kw-vscale.XXXXXX)
trap 'chmod -R u+rwx "$T" 2>/dev/null; rm -rf "$T"' EXIT
unset TRACE_PRIVATE_KEY_PEM
BIG=${KW_BIG_LOG_BYTES:-2000000000}
# The documented bound (docs/record.md): kwitness verify --log stays under
# 16 MiB resident whatever the log.
RSS_BOUND_KB=16384

"$KW" keygen --out "$T/k.pem" >/dev/null
"$KW" key show --key "$T/k.pem" --jwk >"$T/k.jwk"
printf 'network: {}\n' >"$T/bundle"
BH=sha256:$(sha256sum "$T/bundle" | cut -c1-64)
IMAGE=sha256:$(printf 'a%.0s' $(seq 64))
SANDBOX=spiffe://example.org/agent/7

# record HASHFILE MODE [BUNDLE]: a signed record over the hash kw-loggen wrote.
record() {
	local h n
	read -r h n <"$1"
	"$KW" record build --sandbox-id "$SANDBOX" --image-digest "$IMAGE" --policy "${3:-$T/bundle}" \
		--transcript-hash "$h" --call-count "$n" --enforcement-mode "$2" \
		--model-provider anthropic --model-id claude-x | "$KW" sign --key "$T/k.pem" -
}
# frame: the transcript bytes from a log on stdin, with shell tools only.
frame() { printf '['; tr '\n' ',' | head -c -1; printf ']'; }
V=(--key "$T/k.jwk" --max-age 0)

# --- 1. a big log, streamed: RSS bound, hash = collector's = sha256sum -----
gen_big() { "$LOGGEN" --bytes "$BIG" --seed 7 --bundle-hash "$BH" "$@"; }
gen_big --hash-out "$T/big.hash" | frame | sha256sum | cut -c1-64 >"$T/big.sha"
record "$T/big.hash" enforce >"$T/big.rec"
start=$(date +%s)
"$MAXRSS" "$T/rss" "$KW" verify "${V[@]}" --json --log <(gen_big) --policy "$T/bundle" "$T/big.rec" \
	>"$T/big.out"; rc=$?
secs=$(( $(date +%s) - start ))
rss=$(cat "$T/rss")
echo "# $BIG-byte log: verified in ${secs} s, peak RSS ${rss} KiB"
expect_eq "big log ($BIG bytes) verifies, complete" "0 true ok" \
	"$rc $(jq -r .complete "$T/big.out") $(jq -r .reason "$T/big.out")"
check "big log: peak RSS $rss KiB is under the stated bound of $RSS_BOUND_KB KiB" \
	test "$rss" -lt "$RSS_BOUND_KB"
expect_eq "big log: the verifier's transcript hash is the collector's" \
	"$(cut -d' ' -f1 "$T/big.hash")" "$(jq -r .transcript_hash "$T/big.out")"
expect_eq "big log: ...and sha256sum of the framed bytes (tr, head, sha256sum)" \
	"sha256:$(cat "$T/big.sha")" "$(jq -r .transcript_hash "$T/big.out")"
expect_eq "big log: call_count is the collector's" "$(cut -d' ' -f2 "$T/big.hash")" \
	"$(jq -r .log_entries "$T/big.out")"

# --- 2. one byte flipped anywhere in a large log ---------------------------
"$LOGGEN" --decisions 150000 --seed 3 --bundle-hash "$BH" --hash-out "$T/l.hash" >"$T/l.jsonl"
record "$T/l.hash" enforce >"$T/l.rec"
"$KW" verify "${V[@]}" --log "$T/l.jsonl" "$T/l.rec" >/dev/null
expect_eq "large log (150,000 decisions) verifies before any flip" 0 "$?"
size=$(stat -c %s "$T/l.jsonl")
first=$(head -1 "$T/l.jsonl" | wc -c) # the open entry: its fields name the session
cp "$T/l.jsonl" "$T/l.orig"
put_byte() { printf "$2" | dd of="$T/l.jsonl" bs=1 seek="$1" conv=notrunc status=none; }
reason_of() { "$KW" verify "${V[@]}" --json --log "$T/l.jsonl" "$T/l.rec" | jq -r .reason; }
bad=""
for i in $(seq 1 8); do
	off=$(( first + (RANDOM * 32768 + RANDOM) % (size - first) ))
	put_byte "$off" '\000'
	r=$(reason_of)
	[ "$r" = log_malformed ] || bad+=" NUL@$off:$r"
	put_byte "$off" '\377'
	r=$(reason_of)
	[ "$r" = log_malformed ] || bad+=" FF@$off:$r"
	cp "$T/l.orig" "$T/l.jsonl"
	# A digit changed to another (never a leading zero): still canonical
	# JSON, so only the hash can tell.
	d_off=$(tail -c +"$((off + 1))" "$T/l.jsonl" | head -c 4096 | grep -ob '[0-9]' | head -1 | cut -d: -f1)
	d_off=$((off + d_off))
	d=$(dd if="$T/l.jsonl" bs=1 skip="$d_off" count=1 status=none)
	put_byte "$d_off" "$(( d % 9 + 1 ))"
	r=$(reason_of)
	[ "$r" = transcript_mismatch ] || bad+=" digit@$d_off:$r"
	cp "$T/l.orig" "$T/l.jsonl"
done
expect_eq "24 single-byte changes at random offsets: NUL and 0xFF give log_malformed, a changed digit transcript_mismatch" "" "$bad"
cmp -s "$T/l.jsonl" "$T/l.orig"
expect_eq "...and the log is restored" 0 "$?"

# --- 3. bad input: a reason, never a crash, bounded memory -----------------
expect_reason() { # name reason verify-args...
	local name=$1 want=$2 out rc; shift 2
	out=$("$MAXRSS" "$T/rss" "$KW" verify "${V[@]}" --json "$@"); rc=$?
	expect_eq "$name: exit 1, $want" "1 $want" "$rc $(printf '%s' "$out" | jq -r .reason 2>/dev/null)"
	check "$name: peak RSS $(cat "$T/rss") KiB under $RSS_BOUND_KB KiB" test "$(cat "$T/rss")" -lt "$RSS_BOUND_KB"
}
head -c $(( size / 2 )) "$T/l.orig" >"$T/trunc.jsonl"
expect_reason "truncated log" log_truncated --log "$T/trunc.jsonl" "$T/l.rec"
expect_reason "a 1 GB single line (piped)" log_line_too_long \
	--log <(head -c 1073741824 /dev/zero | tr '\0' 'x') "$T/l.rec"
expect_reason "/dev/zero (NUL bytes, no newline)" log_line_too_long --log /dev/zero "$T/l.rec"
{ head -3 "$T/l.orig"; printf '{"a":"\000"}\n'; } >"$T/nul.jsonl"
expect_reason "a NUL byte in a line" log_malformed --log "$T/nul.jsonl" "$T/l.rec"
{ head -3 "$T/l.orig"; printf '{"a":"\303\050"}\n'; } >"$T/utf8.jsonl"
expect_reason "invalid UTF-8" log_malformed --log "$T/utf8.jsonl" "$T/l.rec"
{ head -3 "$T/l.orig"; echo; } >"$T/empty.jsonl"
expect_reason "an empty line" log_malformed --log "$T/empty.jsonl" "$T/l.rec"
{ head -3 "$T/l.orig"; printf '{"b":1, "a":2}\n'; } >"$T/ws.jsonl"
expect_reason "a line that is not canonical" log_not_canonical --log "$T/ws.jsonl" "$T/l.rec"
"$LOGGEN" --decisions 10 --sandbox-id spiffe://example.org/agent/other --bundle-hash "$BH" >"$T/other.jsonl"
expect_reason "a log of a different session" log_session_mismatch --log "$T/other.jsonl" "$T/l.rec"
mkdir "$T/adir"
expect_reason "a directory as the log" log_unreadable --log "$T/adir" "$T/l.rec"
python_free_worst() { # a 256 KiB line whose canonical form is 3.4 times longer
	printf '{"a":['
	yes 1e15 | head -n 52000 | paste -sd, | tr -d '\n'
	printf ']}\n'
}
python_free_worst >"$T/worst.jsonl"
expect_reason "a line that grows 3.4-fold when canonicalised" log_not_canonical --log "$T/worst.jsonl" "$T/l.rec"
# Structure: a line removed is a gap (and a hash mismatch); seq duplicated.
sed '5d' "$T/l.orig" >"$T/gap.jsonl"
expect_reason "a line removed" transcript_mismatch --log "$T/gap.jsonl" "$T/l.rec"
"$LOGGEN" --decisions 50 --gap-every 10 --bundle-hash "$BH" --hash-out "$T/g.hash" >"$T/g.jsonl"
record "$T/g.hash" enforce >"$T/g.rec"
out=$("$KW" verify "${V[@]}" --log "$T/g.jsonl" "$T/g.rec"); rc=$?
case "$rc $out" in "1 invalid: log_incomplete: "*"complete:false, 5 dropped, 5 seq gaps"*) ok "a log with drops: log_incomplete with the counts" ;;
*) not_ok "a log with drops: log_incomplete with the counts (got: $rc $out)" ;; esac
out=$("$KW" verify "${V[@]}" --allow-incomplete --log "$T/g.jsonl" "$T/g.rec"); rc=$?
case "$rc $out" in "0 warning: log_incomplete: "*"valid: record verified"*"completeness: INCOMPLETE"*) ok "--allow-incomplete: a warning line, valid, exit 0" ;;
*) not_ok "--allow-incomplete: a warning line, valid, exit 0 (got: $rc $out)" ;; esac
out=$("$KW" verify "${V[@]}" --log "$T/l.orig" "$T/l.rec")
case $out in *"completeness: complete"*) ok "a complete log says so" ;; *) not_ok "a complete log says so (got: $out)" ;; esac

# --- 4. --dir over 1,000 records -------------------------------------------
S=$T/state
mkdir -p "$S/records" "$S/logs" "$S/policies"
cp "$T/bundle" "$S/policies/${BH#sha256:}"
printf 'other: {}\n' >"$T/bundle2" # never stored in policies/
make_one() { # i
	local i=$1 id mode=enforce args=()
	id=$(printf '%032x' "$i")
	case $((i % 20)) in
	3) args=(--gap-every 2) ;;
	4) args=(--no-close) ;;
	6) args=(--session "$(printf '%032x' $((i + 100000)))") ;;
	7) mode=advisory ;;
	esac
	"$LOGGEN" --decisions $((i % 7 + 2)) --seed "$i" --session "$id" --bundle-hash "$BH" --mode "$mode" \
		"${args[@]}" --hash-out "$T/h.$i" >"$S/logs/$id.jsonl"
	if [ "$i" = 80 ]; then
		record "$T/h.$i" "$mode" "$T/bundle2"
	else
		record "$T/h.$i" "$mode"
	fi >"$S/records/$id.json"
	rm -f "$T/h.$i"
	case $((i % 20)) in
	1) sed -i '2s/"uid":0/"uid":1/' "$S/logs/$id.jsonl" ;;                 # tampered log
	2) sed -i 's/"data_class":"internal"/"data_class":"public"/' "$S/records/$id.json" ;;
	5) rm "$S/logs/$id.jsonl" ;;
	esac
}
gen_start=$(date +%s)
for shard in 0 1; do
	( for ((i = shard; i < 1000; i += 2)); do make_one "$i"; done ) &
done
wait
echo "# 1,000 records made in $(( $(date +%s) - gen_start )) s"
sid() { printf '%032x' "$1"; }
# Special cases among the records that would verify (i % 20 == 0).
mv "$S/records/$(sid 0).json" "$T/outside.json" && ln -s "$T/outside.json" "$S/records/$(sid 0).json"
rm "$S/records/$(sid 20).json" && ln -s "$(sid 20).json" "$S/records/$(sid 20).json" # a loop
rm "$S/logs/$(sid 40).jsonl" && mkfifo "$S/logs/$(sid 40).jsonl"
mv "$S/logs/$(sid 60).jsonl" "$T/outside.jsonl" && ln -s "$T/outside.jsonl" "$S/logs/$(sid 60).jsonl"
printf '\000' | dd of="$S/logs/$(sid 100).jsonl" bs=1 seek=5 conv=notrunc status=none
truncate -s -3 "$S/logs/$(sid 120).jsonl"
echo "not a record" >"$S/records/README"
mkdir "$S/records/$(sid 140).json.d"

# Exact expectations: 50 per residue class; 7 of class 0 are spoiled.
WANT_SUMMARY='{"enforcement":{"advisory":50,"enforce":743},"incomplete":100,"invalid":207,"level":{"0":693},"reasons":{"log_incomplete":100,"log_malformed":1,"log_missing":50,"log_session_mismatch":50,"log_truncated":1,"log_unreadable":2,"policy_missing":1,"record_unreadable":2,"signature_invalid":50,"transcript_mismatch":50},"records":1000,"verified":693}'
summary_of() { tail -1 "$1" | jq -cS '.summary | del(.milliseconds, .jobs, .log_bytes, .ignored)'; }
for j in 1 4; do
	timeout 300 "$KW" verify "${V[@]}" --dir "$S" --jobs "$j" --json >"$T/dir$j.json"; rc=$?
	expect_eq "--dir --jobs $j: exit 1 (not everything verified)" 1 "$rc"
	expect_eq "--dir --jobs $j: exact summary counts" "$WANT_SUMMARY" "$(summary_of "$T/dir$j.json")"
	expect_eq "--dir --jobs $j: one object per record" 1000 "$(grep -c '"record":' "$T/dir$j.json")"
	expect_eq "--dir --jobs $j: the README and the folder are ignored" 2 "$(tail -1 "$T/dir$j.json" | jq .summary.ignored)"
	echo "# --dir --jobs $j: $(tail -1 "$T/dir$j.json" | jq -c '.summary | {milliseconds, log_bytes}')"
done
sorted() { grep '"record":' "$1" | jq -cS 'del(.message)' | sort; }
expect_eq "--jobs 1 and --jobs 4 give the same verdict for every record" "" \
	"$(diff <(sorted "$T/dir1.json") <(sorted "$T/dir4.json"))"
verdict() { jq -r "select(.session == \"$(sid "$1")\") | .reason" "$T/dir4.json"; }
expect_eq "per record: symlinked record, symlink loop, FIFO log, symlinked log, missing policy, NUL, truncated" \
	"record_unreadable record_unreadable log_unreadable log_unreadable policy_missing log_malformed log_truncated" \
	"$(echo $(for i in 0 20 40 60 80 100 120; do verdict $i; done))"
expect_eq "per record: tampered log, tampered record, drops, no trailer, missing log, other session, advisory" \
	"transcript_mismatch signature_invalid log_incomplete log_incomplete log_missing log_session_mismatch ok" \
	"$(echo $(for i in 21 22 23 24 25 26 27; do verdict $i; done))"
"$KW" verify "${V[@]}" --dir "$S" --jobs 2 >"$T/dir.txt" 2>"$T/dir.err"; rc=$?
expect_eq "--dir (text): one line per failure" 307 "$(grep -c ': invalid: ' "$T/dir.txt")"
check "--dir (text): the summary line" grep -qx 'summary: 1000 records: 693 verified, 100 incomplete, 207 invalid' "$T/dir.txt"
check "--dir (text): the reasons line" grep -qx 'reasons: signature_invalid 50, transcript_mismatch 50, log_missing 50, log_unreadable 2, log_truncated 1, log_malformed 1, log_session_mismatch 50, log_incomplete 100, record_unreadable 2, policy_missing 1' "$T/dir.txt"
check "--dir (text): the level line" grep -qx 'level: 693 at level 0, none at level 1 (--dir appraises no TPM evidence)' "$T/dir.txt"
check "--dir (text): the enforcement line" grep -qx 'enforcement mode of the verified and incomplete records: enforce 743, advisory 50' "$T/dir.txt"
check "--dir (text): the failure line names the record and the reason" \
	grep -q "^$S/records/$(sid 21).json: invalid: transcript_mismatch: " "$T/dir.txt"
expect_eq "--dir to a pipe: no progress on stderr" "" "$(cat "$T/dir.err")"
# Only good and incomplete records: --allow-incomplete decides the exit status.
S2=$T/state2
mkdir -p "$S2/records" "$S2/logs" "$S2/policies"
cp "$S/policies/"* "$S2/policies/"
for i in 7 8 9 23 24; do
	cp "$S/records/$(sid $i).json" "$S2/records/"
	cp "$S/logs/$(sid $i).jsonl" "$S2/logs/"
done
"$KW" verify "${V[@]}" --dir "$S2" >/dev/null
expect_eq "--dir with incomplete logs: exit 1" 1 "$?"
"$KW" verify "${V[@]}" --dir "$S2" --allow-incomplete >"$T/s2.txt"
expect_eq "--dir --allow-incomplete: exit 0" 0 "$?"
expect_eq "--dir --allow-incomplete: a warning per incomplete record" 2 "$(grep -c ': warning: log_incomplete: ' "$T/s2.txt")"
# Files the verifier may not read (permissions hold only for a non-root user).
if [ "$(command id -u)" = 0 ] && command -v setpriv >/dev/null; then
	S3=$(mktemp -d /tmp/kw-vscale-perm.XXXXXX)
	chmod 755 "$S3"
	mkdir -p "$S3/records" "$S3/logs" "$S3/policies"
	cp "$S/policies/"* "$S3/policies/"
	for i in 7 8 9; do
		cp "$S/records/$(sid $i).json" "$S3/records/"
		cp "$S/logs/$(sid $i).jsonl" "$S3/logs/"
	done
	cp "$T/k.jwk" "$S3/k.jwk"
	chmod -R a+rX "$S3"
	chmod 000 "$S3/records/$(sid 8).json" "$S3/logs/$(sid 7).jsonl"
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$KW" verify --key "$S3/k.jwk" --max-age 0 --dir "$S3" --json >"$T/perm.json"; rc=$?
	expect_eq "unreadable files (as nobody): exit 1, log_unreadable, record_unreadable, the third verifies" \
		"1 log_unreadable record_unreadable ok" \
		"$rc $(echo $(for i in 7 8 9; do jq -r "select(.session == \"$(sid $i)\") | .reason" "$T/perm.json"; done))"
	check "...saying why" grep -q 'Permission denied' "$T/perm.json"
	rm -rf "$S3"
else
	skip "not root or no setpriv: unreadable files not checked"
fi
# A list of records instead of a folder.
"$KW" verify "${V[@]}" --json "$S/records/$(sid 7).json" "$S/records/$(sid 21).json" >"$T/list.json"
expect_eq "several RECORDs: each with its own log and bundle" "ok transcript_mismatch" \
	"$(echo $(head -2 "$T/list.json" | jq -r .reason | sort))"

# --- 5. progress on a terminal only ----------------------------------------
if command -v script >/dev/null; then
	script -qec "$KW verify --key $T/k.jwk --max-age 0 --dir $S --jobs 2" /dev/null >"$T/pty.txt" 2>&1
	check "progress appears on a pty (--dir): records done, rate, ETA" \
		grep -qa 'kwitness verify: [0-9]*/1000 records, .* records/s, ETA' "$T/pty.txt"
	script -qec "$KW verify --key $T/k.jwk --max-age 0 --log $T/l.orig $T/l.rec" /dev/null >"$T/pty2.txt" 2>&1
	check "progress appears on a pty (--log): bytes of the total, rate, ETA" \
		grep -qa 'kwitness verify: [0-9.]* [kM]\?B of [0-9.]* MB, [0-9.]* [kM]\?B/s' "$T/pty2.txt"
	script -qec "$KW verify --key $T/k.jwk --max-age 0 --json --dir $S" /dev/null >"$T/pty3.txt" 2>&1
	check "no progress with --json, even on a pty" test "$(grep -ca 'kwitness verify: ' "$T/pty3.txt")" = 0
	"$KW" verify "${V[@]}" --log "$T/l.orig" "$T/l.rec" 2>&1 >/dev/null | cat >"$T/pipe.txt"
	expect_eq "no progress on a pipe (--log)" "" "$(cat "$T/pipe.txt")"
else
	skip "script (util-linux) missing: progress on a pty not checked"
fi

# --- 6. a log cut into segments (docs/decision-log.md, "Segments") ----------
# kw-loggen's log split at lines into ~1,000 files with a manifest written
# here (Python's json, an RFC 8785 form of its own for these members):
# verified across them, in the same memory bound although the log is 4 times it.
if command -v python3 >/dev/null && command -v split >/dev/null; then
	SEGB=${KW_SEG_LOG_BYTES:-64000000}
	G=$T/seg
	mkdir -p "$G"
	"$LOGGEN" --bytes "$SEGB" --seed 9 --bundle-hash "$BH" --hash-out "$T/seg.hash" >"$G/whole"
	record "$T/seg.hash" enforce >"$T/seg.rec"
	(cd "$G" && split -C 65536 -d -a 6 whole part. && rm whole)
	python3 - "$G" <<'EOF'
import hashlib, json, os, sys
d = sys.argv[1]
parts = sorted(p for p in os.listdir(d) if p.startswith("part."))
with open(os.path.join(d, "s.jsonl.segments"), "w") as m:
    for i, p in enumerate(parts, 1):
        b = open(os.path.join(d, p), "rb").read()
        m.write(json.dumps({"bytes": len(b), "lines": b.count(b"\n"), "n": i,
                            "sha256": "sha256:" + hashlib.sha256(b).hexdigest(),
                            "type": "kwitness.segment"}, sort_keys=True,
                           separators=(",", ":")) + "\n")
        os.rename(os.path.join(d, p), os.path.join(d, "s.jsonl" + ("" if i == 1 else f".{i}")))
EOF
	nseg=$(wc -l <"$G/s.jsonl.segments")
	"$MAXRSS" "$T/rss" "$KW" verify "${V[@]}" --json --log "$G/s.jsonl" --policy "$T/bundle" \
		"$T/seg.rec" >"$T/seg.out"; rc=$?
	rss=$(cat "$T/rss")
	echo "# $SEGB-byte log in $nseg segments: peak RSS $rss KiB"
	expect_eq "a log in $nseg segments verifies" "0 true ok" \
		"$rc $(jq -r '"\(.valid) \(.reason)"' "$T/seg.out")"
	check "...streamed: peak RSS $rss KiB under $RSS_BOUND_KB KiB for a $SEGB-byte log" \
		test "$rss" -lt "$RSS_BOUND_KB"
	mv "$G/s.jsonl.500" "$G/x"; mv "$G/s.jsonl.501" "$G/s.jsonl.500"; mv "$G/x" "$G/s.jsonl.501"
	"$KW" verify "${V[@]}" --json --log "$G/s.jsonl" --policy "$T/bundle" "$T/seg.rec" >"$T/seg.out"
	expect_eq "two of them swapped: segment_reordered" segment_reordered "$(jq -r .reason "$T/seg.out")"
	rm -rf "$G"
else
	skip "python3 or split missing: a segmented log not checked"
fi

finish
