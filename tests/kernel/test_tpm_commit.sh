#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Committed sessions (docs/attestation.md): kwitnessd --tpm extends every
# session's open (bundle hash, image digest, TPM counter value) and close
# (transcript hash) into its NV extend index and certifies it at close;
# verify --evidence --log replays the extends; a re-signed record with another
# bundle hash does not replay; the NV counter rises by one per session; a
# session whose files are deleted is a gap estate verify reports.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kwd_lib.sh"
. "$(dirname "$0")/tpm_lib.sh"

missing=$(swtpm_tools_missing) && kt_skip_all "$missing not installed (scripts/deps.sh installs swtpm, swtpm-tools, tpm2-tools)"
command -v tpm2_nvreadpublic >/dev/null || kt_skip_all "tpm2_nvreadpublic not installed (tpm2-tools)"
kwd_require
trap 'swtpm_cleanup; kwd_cleanup' EXIT
T=$KT_TMP

make_ca "$T/ca" "kwitness test EK CA" || kt_skip_all "openssl cannot make a test CA"
swtpm_make "$T/tpm" "$T/ca" || kt_skip_all "swtpm_setup failed"
swtpm_start "$T/tpm" || kt_skip_all "swtpm did not start"
"$KW" keygen --out "$T/enroll.pem" >/dev/null
"$KW" key show --key "$T/enroll.pem" --jwk >"$T/enroll.jwk"
"$KW" tpm enroll --tpm "$TCTI" --tpm-ca "$T/ca/issuercert.pem" --enroll-key "$T/enroll.pem" \
	--key "$KT_TMP/signer.jwk" --ak-out "$T/ak.json" --out "$T/enrollment.json" 2>"$T/enroll.err" ||
	kt_fail_all "tpm enroll failed: $(tail -1 "$T/enroll.err")"

kwd_start --tpm "$TCTI" --tpm-ak "$T/ak.json" --tpm-enrollment "$T/enrollment.json"
ST=$T/state
expect_eq "start: the NV auth value is owner-only (0600), 32 bytes" "600 32" \
	"$(stat -c '%a %s' "$ST/tpm-commit.auth")"
# Read with tpm2-tools, not kwitness: the indexes kwitnessd defined.
# Read with tpm2-tools, not kwitness: the indexes kwitnessd defined have exactly
# AUTHWRITE (bit 2) | AUTHREAD (bit 18) | NO_DA (bit 25) and their type (bits
# 4-7: 1 counter, 4 extend; TPM 2.0 Part 2, TPMA_NV), nothing else but WRITTEN.
nv_attrs() {
	local v
	v=$(tpm2_nvreadpublic -T "$TCTI" "$1" 2>/dev/null | sed -n '/attributes:/,/value:/s/.*value: *//p')
	echo $(( ${v:-0} & ~(1 << 29) ))
}
base=$(( (1 << 2) | (1 << 18) | (1 << 25) ))
expect_eq "start: NV index 0x1004b57 is an extend index written and read only with its auth" \
	$(( base | (4 << 4) )) "$(nv_attrs 0x1004b57)"
expect_eq "start: NV index 0x1004b58 is a counter written and read only with its auth" \
	$(( base | (1 << 4) )) "$(nv_attrs 0x1004b58)"

POLICY=$(policy_file commit '{"kwitness_policy":1,"mode":"enforce"}')
run_one() { # NAME CMD...: a session; its record and log paths in NAME.rec/NAME.log
	local name=$1
	shift
	"$KW" run --socket "$KT_SOCK" --policy "$POLICY" --key-jwk "$KT_TMP/signer.jwk" -- "$@" \
		>/dev/null 2>"$T/$name.err"
	sed -n 's/^record: *//p' "$T/$name.err" >"$T/$name.rec"
	sed -n 's/^log: *//p' "$T/$name.err" >"$T/$name.log"
}
# A stays open (until go) while B and C open and close: their events interleave.
# (The session runs as nobody: the gate is in a folder it can read.)
GATE=$(mktemp -d /tmp/kwitness-gate.XXXXXX) && chmod 755 "$GATE"
trap 'swtpm_cleanup; kwd_cleanup; rm -rf "$GATE"' EXIT
run_one a timeout 60 sh -c "while [ ! -f '$GATE/go' ]; do sleep 0.05; done" &
apid=$!
for _ in $(seq 200); do [ -n "$(ls "$ST/logs/" 2>/dev/null)" ] && break; sleep 0.05; done
run_one b true
run_one c true
touch "$GATE/go"
wait $apid
run_one d true
for n in a b c d; do
	[ -s "$T/$n.rec" ] || { sed 's/^/# /' "$T/$n.err" "$KT_TMP/kwitnessd.log" | tail -8; kt_fail_all "session $n left no record"; }
done
counter() { jq -r 'select(.tool == "kwitness.open") | .tpm_counter' "$(cat "$T/$1.log")"; }
session() { jq -r 'select(.tool == "kwitness.open") | .session' "$(cat "$T/$1.log")"; }
ca=$(counter a) cb=$(counter b) cc=$(counter c) cd=$(counter d)
check "open entries name a TPM counter value" grep -qE '^[0-9]+ [0-9]+ [0-9]+ [0-9]+$' <<<"$ca $cb $cc $cd"
expect_eq "the counter rises by one per session, in open order" \
	"$((ca + 1)) $((ca + 2)) $((ca + 3))" "$cb $cc $cd"
tpm_now=$(tpm2_nvread -T "$TCTI" -C 0x1004b58 -P "hex:$(od -An -tx1 "$ST/tpm-commit.auth" | tr -d ' \n')" 0x1004b58 2>/dev/null |
	od -An -tx1 | tr -d ' \n')
expect_eq "the TPM's counter (tpm2_nvread with the auth value) is the last session's" \
	"$cd" "$((16#${tpm_now:-0}))"

EVNAME=$(jq -r 'select(.tool == "kwitness.close") | .evidence' "$(cat "$T/d.log")")
EV=$ST/evidence/${EVNAME#sha256:}.json
verify_commit() { # NAME [options]: the JSON verdict of verify --evidence --log
	local n=$1
	shift
	"$KW" verify --key "$KT_TMP/signer.jwk" --log "$(cat "$T/$n.log")" "$(cat "$T/$n.rec")" \
		--evidence "$EV" --tpm-ca "$T/ca/issuercert.pem" --enroll-key "$T/enroll.jwk" --json "$@"
}
for n in a b c d; do
	expect_eq "verify --evidence --log: session $n is level 1 and its extends replay" "true 1 ok" \
		"$(verify_commit $n | jq -r '"\(.valid) \(.level) \(.commit.reason)"')"
done
expect_eq "the commitment of A holds the events of B and C extended meanwhile (2 + 4)" 6 \
	"$(jq '.events | length' "$ST/commit/$(session a).json")"
hex2bin() { printf "$(sed 's/../\\x&/g' <<<"$1")"; }
# The replay, independently: SHA-256 chain with openssl from start over events.
v=$(jq -r .start "$ST/commit/$(session b).json")
for e in $(jq -r '.events[]' "$ST/commit/$(session b).json"); do
	v=$(hex2bin "$v$e" | openssl dgst -sha256 -r | cut -d' ' -f1)
done
att=$(b64url_dec "$(jq -r .certify.attest "$ST/commit/$(session b).json")" | od -An -tx1 | tr -d ' \n')
check "openssl replay of B's events gives the nvContents the TPM certified" \
	test "${att: -64}" = "$v"
open_b=$(printf 'kwitness.open\n%s\n%s\n%s\n%s\n' "$(session b)" "$cb" \
	"$(jq -r .policy.bundle_hash "$(cat "$T/b.rec")")" "$(jq -r .build_provenance.digest "$(cat "$T/b.rec")")" |
	openssl dgst -sha256 -r | cut -d' ' -f1)
expect_eq "B's first event is SHA-256 of its open text (session, counter, bundle hash, image)" \
	"$open_b" "$(jq -r '.events[0]' "$ST/commit/$(session b).json")"
check "human output: a commit line" grep -q '^commit: ok: the TPM saw this session open' \
	<<<"$("$KW" verify --key "$KT_TMP/signer.jwk" --log "$(cat "$T/b.log")" "$(cat "$T/b.rec")" \
		--evidence "$EV" --tpm-ca "$T/ca/issuercert.pem" --enroll-key "$T/enroll.jwk")"

# --- another process with TPM access (a tss-group member, here any client) -------
refused() { ! "$@" >/dev/null 2>&1; }
printf 'forged' >"$T/x"
check "another process cannot extend the index with owner authorisation" \
	refused tpm2_nvextend -T "$TCTI" -C o -i "$T/x" 0x1004b57
check "... nor with an empty index auth value" refused tpm2_nvextend -T "$TCTI" -C 0x1004b57 -i "$T/x" 0x1004b57
check "... nor increment the counter with owner authorisation" refused tpm2_nvincrement -T "$TCTI" -C o 0x1004b58
expect_eq "after those attempts, the next session still commits and replays" "true ok" \
	"$(run_one e true; verify_commit e | jq -r '"\(.valid) \(.commit.reason)"')"

# --- forgeries ------------------------------------------------------------------
# Another bundle hash, in the record and the log's open entry, the transcript
# hash recomputed and the record re-signed with the same key: it verifies
# (level 1), but the TPM saw the real bundle hash.
forged_hash=sha256:$(printf 'ab%.0s' $(seq 32))
real_hash=$(jq -r .policy.bundle_hash "$(cat "$T/c.rec")")
sed "1s/$real_hash/$forged_hash/" "$(cat "$T/c.log")" >"$T/forged.jsonl"
forged_tr=sha256:$( (printf '['; paste -sd, "$T/forged.jsonl" | tr -d '\n'; printf ']') |
	openssl dgst -sha256 -r | cut -d' ' -f1)
jq -c --arg b "$forged_hash" --arg t "$forged_tr" \
	'del(.signature) | .policy.bundle_hash = $b | .tool_transcript.hash = $t' "$(cat "$T/c.rec")" >"$T/forged.unsigned"
"$KW" sign --key "$KT_TMP/key.pem" "$T/forged.unsigned" >"$T/forged.json"
forged_verify() { # [options]: the JSON verdict of the forged record and log
	"$KW" verify --key "$KT_TMP/signer.jwk" --log "$T/forged.jsonl" "$T/forged.json" --evidence "$EV" \
		--tpm-ca "$T/ca/issuercert.pem" --enroll-key "$T/enroll.jwk" --json \
		--commit "$ST/commit/$(session c).json" "$@"
}
out=$(forged_verify)
rc=$?
expect_eq "a re-signed record and log with another bundle hash: level 1, but the extends do not replay (exit 1)" \
	"1 1 false tpm_commit_event_mismatch" "$rc $(jq -r '"\(.level) \(.valid) \(.commit.reason)"' <<<"$out")"
# ... and its commitment edited to the forged open event: the replay fails.
forged_open=$(printf 'kwitness.open\n%s\n%s\n%s\n%s\n' "$(session c)" "$cc" "$forged_hash" \
	"$(jq -r .build_provenance.digest "$(cat "$T/c.rec")")" | openssl dgst -sha256 -r | cut -d' ' -f1)
forged_close=$(printf 'kwitness.close\n%s\n%s\n' "$(session c)" "$forged_tr" | openssl dgst -sha256 -r | cut -d' ' -f1)
jq -c --arg o "$forged_open" --arg c "$forged_close" '.events[.open_at] = $o | .events[-1] = $c' \
	"$ST/commit/$(session c).json" >"$T/forged-commit.json"
expect_eq "... with the commitment's events forged too: the certification names the real close" \
	"false tpm_commit_event_mismatch" \
	"$(forged_verify --commit "$T/forged-commit.json" | jq -r '"\(.valid) \(.commit.reason)"')"
jq -c --arg o "$forged_open" '.events[.open_at] = $o' "$ST/commit/$(session c).json" >"$T/forged-open.json"
expect_eq "the real record with its commitment's open event forged: tpm_commit_event_mismatch" \
	"false tpm_commit_event_mismatch" \
	"$(verify_commit c --commit "$T/forged-open.json" | jq -r '"\(.valid) \(.commit.reason)"')"
jq -c '.events[1] = ("00" * 32)' "$ST/commit/$(session a).json" >"$T/forged-mid.json"
expect_eq "A's commitment with another session's event changed: tpm_commit_replay_mismatch" \
	"false tpm_commit_replay_mismatch" \
	"$(verify_commit a --commit "$T/forged-mid.json" | jq -r '"\(.valid) \(.commit.reason)"')"
expect_eq "another session's commitment: another open and close" "tpm_commit_event_mismatch" \
	"$(verify_commit c --commit "$ST/commit/$(session d).json" | jq -r .commit.reason)"
mv "$ST/commit/$(session d).json" "$T/d-commit.json"
expect_eq "a committed session whose commitment file is gone: tpm_commit_missing, invalid" \
	"false tpm_commit_missing" "$(verify_commit d | jq -r '"\(.valid) \(.commit.reason)"')"
mv "$T/d-commit.json" "$ST/commit/$(session d).json"

# --- a session resumed across a restart (its pins kept) ---------------------------
# R opens; S opens and closes while R runs; kwitnessd stops (SIGTERM: the session
# stays pinned) and starts again, resuming R; U opens and closes; R closes. R's
# commitment must hold its open (extended before the restart), S's events, U's and
# its close, and replay to what the TPM certified at its close.
kwd_stop
KT_PIN=/sys/fs/bpf/kwt-$$
start_committed() {
	kwd_start --pin-dir "$KT_PIN" --tpm "$TCTI" --tpm-ak "$T/ak.json" --tpm-enrollment "$T/enrollment.json"
	for _ in $(seq 300); do "$KW" session list --socket "$KT_SOCK" >/dev/null 2>&1 && return 0; sleep 0.05; done
}
start_committed
ls "$ST/logs" >"$T/logs-before"
run_one r timeout 60 sh -c "while [ ! -f '$GATE/go2' ]; do sleep 0.05; done" &
rpid=$!
for _ in $(seq 200); do ls "$ST/logs" | grep -qvxFf "$T/logs-before" && break; sleep 0.05; done
run_one s true
kwd_stop
start_committed
run_one u true
touch "$GATE/go2"
wait $rpid
[ -s "$T/r.rec" ] || { sed 's/^/# /' "$T/r.err" | tail -4; kt_fail_all "the resumed session left no record"; }
check "R was resumed by the second collector (a kwitness.resume entry)" \
	grep -q '"tool":"kwitness.resume"' "$(cat "$T/r.log")"
verify_own() { # NAME: verify --evidence --log with the evidence its own close entry names
	local ev
	ev=$(jq -r 'select(.tool == "kwitness.close") | .evidence' "$(cat "$T/$1.log")")
	"$KW" verify --key "$KT_TMP/signer.jwk" --log "$(cat "$T/$1.log")" "$(cat "$T/$1.rec")" \
		--evidence "$ST/evidence/${ev#sha256:}.json" --tpm-ca "$T/ca/issuercert.pem" \
		--enroll-key "$T/enroll.jwk" --json
}
expect_eq "a session resumed across a restart: level 1, and its extends replay" "true 1 ok" \
	"$(verify_own r | jq -r '"\(.valid) \(.level) \(.commit.reason)"')"
expect_eq "R's commitment: its open, S's open and close, U's open and close, its close (6)" 6 \
	"$(jq '.events | length' "$ST/commit/$(session r).json" 2>/dev/null)"
expect_eq "sessions before and after the restart still replay (S, U)" "ok ok" \
	"$(verify_own s | jq -r .commit.reason) $(verify_own u | jq -r .commit.reason)"
# An edited chain file cannot commit a session: kwitnessd trusts the file only
# when its events replay to the index's value, which it reads from the TPM.
ls "$ST/logs" >"$T/logs-before"
run_one r2 timeout 60 sh -c "while [ ! -f '$GATE/go3' ]; do sleep 0.05; done" &
rpid=$!
for _ in $(seq 200); do ls "$ST/logs" | grep -qvxFf "$T/logs-before" && break; sleep 0.05; done
kwd_stop
sed -i "2s/.*/$(printf '0%.0s' $(seq 64))/" "$ST/tpm-commit.chain"
start_committed
touch "$GATE/go3"
wait $rpid
check "restart with an edited chain file: kwitnessd says it does not replay" \
	grep -q 'tpm-commit.chain does not replay' "$KT_TMP/kwitnessd.log"
expect_eq "... and the session resumed then closes without a commitment (tpm_commit_missing)" \
	"false tpm_commit_missing" "$(verify_own r2 | jq -r '"\(.valid) \(.commit.reason)"')"
kwd_stop
rm -rf "$KT_PIN"
mv "$ST/records/$(session r2).json" "$ST/logs/$(session r2).jsonl" "$T/"

# --- verify --dir and estate ingest check commitments too -------------------------
out=$("$KW" verify --dir "$ST" --key "$KT_TMP/signer.jwk" --json)
expect_eq "verify --dir: every session of the folder verifies, commitments included (exit 0)" \
	0 "$?"
cp -a "$ST" "$T/tampered"
jq -c '.start = ("00" * 32)' "$ST/commit/$(session c).json" >"$T/tampered/commit/$(session c).json"
rm "$T/tampered/commit/$(session d).json"
out=$("$KW" verify --dir "$T/tampered" --key "$KT_TMP/signer.jwk" --json)
rc=$?
dir_reason() { jq -r --arg s "$1" 'select(.session == $s) | "\(.valid) \(.reason)"' <<<"$out"; }
expect_eq "verify --dir: a commitment whose start was changed does not replay" \
	"false tpm_commit_replay_mismatch" "$(dir_reason "$(session c)")"
expect_eq "verify --dir: a committed session whose commitment is gone" \
	"false tpm_commit_missing" "$(dir_reason "$(session d)")"
expect_eq "verify --dir: the untouched sessions still verify; exit 1" "true true 1" \
	"$(dir_reason "$(session a)" | cut -d' ' -f1) $(dir_reason "$(session r)" | cut -d' ' -f1) $rc"
mkdir -p "$T/trust" && cp "$KT_TMP/signer.jwk" "$T/trust/"
"$KW" estate ingest --create --db "sqlite:$T/tampered.sqlite" --trust "$T/trust" "$T/tampered" >"$T/ingest-tampered.out"
rc=$?
rejected() { "$KW" estate rejected --db "sqlite:$T/tampered.sqlite" --json |
	jq -r --arg s "$1" 'select(.session == $s) | .reason'; }
expect_eq "estate ingest: the tampered commitment is rejected with the same reason" \
	"tpm_commit_replay_mismatch" "$(rejected "$(session c)")"
expect_eq "estate ingest: the missing commitment too; exit 1" "tpm_commit_missing 1" \
	"$(rejected "$(session d)") $rc"


# --- suppression: a deleted session is a gap ------------------------------------
"$KW" estate ingest --create --db "sqlite:$T/full.sqlite" --trust "$T/trust" "$ST" >"$T/ingest-full.out"
out=$("$KW" estate verify --db "sqlite:$T/full.sqlite" --trust "$T/trust")
expect_eq "estate verify, every session there: no counter gap (exit 0)" "0 " "$? $(grep '^missing:' <<<"$out")"
sb=$(session b)
rm -f "$ST/records/$sb.json" "$ST/logs/$sb.jsonl" "$ST/commit/$sb.json"
"$KW" estate ingest --create --db "sqlite:$T/gap.sqlite" --trust "$T/trust" "$ST" >"$T/ingest-gap.out"
check "estate ingest reports the missing session" \
	grep -q "^missing: host .* counter $cb: 1 session between" "$T/ingest-gap.out"
out=$("$KW" estate verify --db "sqlite:$T/gap.sqlite" --trust "$T/trust")
rc=$?
expect_eq "estate verify: exactly one missing session, counter $cb, between A and C" \
	"missing: host $(hostname) ($(cat /etc/machine-id)): counter $cb: 1 session between $(session a) and $(session c)" \
	"$(grep '^missing: ' <<<"$out" | sed 's/ (opened .*//')"
check "estate verify: a gap is a failure (exit 1)" test $rc -eq 1
"$KW" estate report --db "sqlite:$T/gap.sqlite" --trust "$T/trust" --session "$(session c)" --html "$T/report.html" >/dev/null 2>&1
check "estate report --html of the session after the gap shows it" \
	grep -q "1 session missing before this one" "$T/report.html"
finish
