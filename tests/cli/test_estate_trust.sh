#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Which key speaks for which host (docs/estate.md, "Trust"): the trust
# folder's hosts file binds each key to the hosts it may sign for. A record
# signed by host alpha's key that names host beta is refused (host_mismatch);
# a second record for a session id the estate holds under another signer is
# refused (session_conflict), and a report of a session id held under two
# signers is refused; a record and log renamed together to another session
# id are refused (log_session_mismatch). Synthetic sessions (kw-loggen),
# really signed, in SQLite.
source "$(dirname "$0")/../lib.sh"

LOGGEN=$KW_BUILD/tests/kw-loggen
if [ ! -x "$KW" ] || [ ! -x "$LOGGEN" ] || ! command -v sqlite3 >/dev/null; then
	not_ok "kwitness, kw-loggen or sqlite3 missing"
	finish
fi
T=$(mktemp -d /tmp/kw-estate-trust.XXXXXX)
trap 'rm -rf "$T"' EXIT
printf '{"kwitness_policy":1,"mode":"enforce","net":{"connect":["10.0.0.0/8:443"]}}\n' >"$T/bundle"
BH=$(sha256sum "$T/bundle" | cut -c1-64)
IMAGE=sha256:$(printf 'a%.0s' $(seq 64))
. "$KW_ROOT/tests/cli/estate_lib.sh"
session() { estate_session "$1" "$2" "$3" estate_sign_plain "${@:4}"; }

# forge SIGNER FOLDER SESSION NAMED-HOST SEED: a record signed by SIGNER's
# key, in state folder FOLDER, for session id SESSION, whose log names host
# NAMED-HOST (machine id mid-NAMED-HOST).
forge() {
	local key=$1 dir=$T/$2 sid=$3 named=$4 seed=$5 th c
	mkdir -p "$dir/records" "$dir/logs" "$dir/policies"
	cp "$T/bundle" "$dir/policies/$BH"
	"$LOGGEN" --decisions 20 --session "$sid" --sandbox-id "spiffe://t/$named/$seed" \
		--bundle-hash "sha256:$BH" --image-digest "$IMAGE" --seed "$seed" --hostname "$named" \
		--machine-id "mid-$named" --hash-out "$T/hash" >"$dir/logs/$sid.jsonl"
	read -r th c <"$T/hash"
	"$KW" record build --sandbox-id "spiffe://t/$named/$seed" --image-digest "$IMAGE" \
		--policy "$T/bundle" --transcript-hash "$th" --call-count "$c" \
		--enforcement-mode enforce --model-provider anthropic --model-id claude-x >"$T/unsigned"
	"$KW" sign --key "$T/$key.pem" "$T/unsigned" >"$dir/records/$sid.json"
}

A1=$(session alpha 50 1)
B1=$(session beta 50 2)
printf '# key file   the hosts it signs for\nalpha.jwk hostname=alpha machine_id=mid-alpha\nbeta.jwk  hostname=beta\n' \
	>"$T/trust/hosts"
DB="sqlite:$T/e.sqlite"
out=$("$KW" estate ingest --create --db "$DB" --trust "$T/trust" "$T/hosts"); rc=$?
expect_eq "genuine records of both hosts are stored" "0 2 stored" "$rc $(grep -o '[0-9]\+ stored' <<<"$out" | head -1)"

# Host alpha's key signs a record naming host beta (a new session id).
FORGED=$(printf forged | sha256sum | cut -c1-32)
forge alpha forged-host "$FORGED" beta 7
out=$("$KW" estate ingest --create --db "$DB" --trust "$T/trust" "$T/forged-host"); rc=$?
expect_eq "alpha's key naming host beta: rejected, host_mismatch" "1 host_mismatch" \
	"$rc $(sed -n 's/^rejected: [^:]*: \([a-z_]*\):.*/\1/p' <<<"$out")"
expect_eq "...nothing of it is stored: beta's decisions are beta's own" \
	"$(grep -vc '"tool":"kwitness\.' "$T/hosts/beta/logs/$B1.jsonl")" \
	"$("$KW" estate query --db "$DB" --host beta --count)"
expect_eq "...the rejected table says host_mismatch" "host_mismatch" \
	"$(sqlite3 "$T/e.sqlite" "SELECT reason FROM rejected WHERE session = '$FORGED'")"
# A binding on machine id too: alpha's key with host alpha but machine id
# mid-other is refused as well.
OTHER=$(printf other | sha256sum | cut -c1-32)
forge alpha forged-mid "$OTHER" alpha 8
"$LOGGEN" --decisions 20 --session "$OTHER" --sandbox-id spiffe://t/alpha/8 --bundle-hash "sha256:$BH" \
	--image-digest "$IMAGE" --seed 8 --hostname alpha --machine-id mid-other --hash-out "$T/hash" \
	>"$T/forged-mid/logs/$OTHER.jsonl"
read -r th c <"$T/hash"
"$KW" record build --sandbox-id spiffe://t/alpha/8 --image-digest "$IMAGE" --policy "$T/bundle" \
	--transcript-hash "$th" --call-count "$c" --enforcement-mode enforce --model-provider anthropic --model-id claude-x >"$T/unsigned"
"$KW" sign --key "$T/alpha.pem" "$T/unsigned" >"$T/forged-mid/records/$OTHER.json"
out=$("$KW" estate ingest --create --db "$DB" --trust "$T/trust" "$T/forged-mid")
check "alpha's key with another machine id: host_mismatch" grep -q ': host_mismatch: ' <<<"$out"

# Host alpha's key signs a record for beta's session id, naming itself.
forge alpha conflict "$B1" alpha 9
out=$("$KW" estate ingest --create --db "$DB" --trust "$T/trust" "$T/conflict"); rc=$?
expect_eq "a second record for beta's session under alpha's key: session_conflict" "1 session_conflict" \
	"$rc $(sed -n 's/^rejected: [^:]*: \([a-z_]*\):.*/\1/p' <<<"$out")"
expect_eq "...the session is still beta's alone" "beta" \
	"$(sqlite3 "$T/e.sqlite" "SELECT group_concat(hostname) FROM records WHERE session = '$B1'")"
expect_eq "estate report of beta's session: its own record, valid" 0 \
	"$("$KW" estate report --db "$DB" --trust "$T/trust" --session "$B1" >/dev/null; echo $?)"

# A database that holds a session id under two signers (written before
# this check, or by hand): the report refuses it and names both.
sqlite3 "$T/e.sqlite" "INSERT INTO records (session, record_digest, sandbox_id, hostname, machine_id, boot_id,
	kernel, signer, bundle_hash, enforcement_mode, platform, level, complete, incomplete_why, iat,
	opened_us, closed_us, decisions, denials, transcript_hash, call_count, image_digest, record_path,
	record_json, ingested_at) SELECT session, 'sha256:x', sandbox_id, 'alpha', machine_id, boot_id,
	kernel, 'other-signer', bundle_hash, enforcement_mode, platform, level, complete, incomplete_why,
	iat, opened_us, closed_us, decisions, denials, transcript_hash, call_count, image_digest,
	record_path, record_json, ingested_at FROM records WHERE session = '$B1'"
err=$("$KW" estate report --db "$DB" --trust "$T/trust" --session "$B1" 2>&1 >/dev/null); rc=$?
expect_eq "report of a session held under two signers: refused (exit 2)" 2 "$rc"
check "...saying it is ambiguous and naming both signers" \
	bash -c 'grep -q "ambiguous.*2 signers" <<<"$1" && grep -q other-signer <<<"$1" && grep -q "host beta" <<<"$1"' _ "$err"

# A record and its log renamed together to another session id.
NEWID=$(printf renamed | sha256sum | cut -c1-32)
mkdir -p "$T/renamed/records" "$T/renamed/logs" "$T/renamed/policies"
cp "$T/bundle" "$T/renamed/policies/$BH"
cp "$T/hosts/alpha/records/$A1.json" "$T/renamed/records/$NEWID.json"
cp "$T/hosts/alpha/logs/$A1.jsonl" "$T/renamed/logs/$NEWID.jsonl"
out=$("$KW" estate ingest --create --db "sqlite:$T/fresh.sqlite" --trust "$T/trust" "$T/renamed"); rc=$?
expect_eq "a record and log renamed to another session id: log_session_mismatch" "1 log_session_mismatch" \
	"$rc $(sed -n 's/^rejected: [^:]*: \([a-z_]*\):.*/\1/p' <<<"$out")"
expect_eq "...nothing stored under the new id" 0 \
	"$(sqlite3 "$T/fresh.sqlite" "SELECT count(*) FROM records WHERE session = '$NEWID'")"

# The hosts file is checked: a line for no key, a field it does not know.
bad_trust() { # NAME WANT LINE
	rm -rf "$T/t2" && cp -r "$T/trust" "$T/t2" && printf '%s\n' "$3" >"$T/t2/hosts"
	local err rc
	err=$("$KW" estate ingest --create --db "sqlite:$T/x.sqlite" --trust "$T/t2" "$T/hosts" 2>&1 >/dev/null); rc=$?
	if [ $rc -eq 2 ] && grep -qF -- "$2" <<<"$err"; then ok "hosts file: $1"; else
		not_ok "hosts file: $1 (exit $rc: $err)"; fi
}
bad_trust "a line for a key file the folder lacks" "which is no key file" "gamma.jwk hostname=gamma"
bad_trust "an unknown field" "is not hostname=NAME" "alpha.jwk host=alpha"
bad_trust "a key bound to no host" "to no host" "alpha.jwk"
finish
