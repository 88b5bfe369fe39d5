#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A build-like session under kwitnessd, then kwitness attest --in-toto: the
# job copies a source file to its artifact, reaches the one address its
# policy allows and tries one it does not. The attestation's predicate lists
# exactly that destination and that denial, and, where the kernel hashes
# executed files (BPF-LSM: the VM), exactly the programs the job ran with
# the digests sha256sum gives; on a kernel without BPF-LSM (this host) exec
# is not governed, and the predicate says so: no executables, coverage false.
# verify-attestation accepts the envelope for the artifact and the record.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kwd_lib.sh"

kwd_require
command -v jq >/dev/null || kt_skip_all "needs jq (scripts/deps.sh installs it)"
kwd_start
listeners_start
T=$KT_TMP
# The job runs as nobody (kwitness run's default): its folders are open to it.
B=$T/build
mkdir -p "$B/src" "$B/out" && chmod 711 "$T" && chmod 755 "$B" "$B/src" && chmod 777 "$B/out"
printf 'int main(void) { return 0; }\n' >"$B/src/main.c" && chmod 644 "$B/src/main.c"
# Run by their names (busybox's applets are links it tells apart by name);
# their digests are the files the names resolve to.
CP=$(command -v cp) SH=$(command -v sh)

if kwd_has_hook exec.digest; then
	EXEC=1
	EXEC_POLICY=',"exec":{"allow":["/"]}'
else
	EXEC=0 EXEC_POLICY=
fi
POLICY=$(policy_file build "{\"kwitness_policy\":1,\"mode\":\"enforce\",\"record\":\"all\",\"net\":{\"connect\":[\"127.0.0.1/32:$LPORT_A\"]}$EXEC_POLICY}")
"$KW" run --socket "$KT_SOCK" --policy "$POLICY" --key-jwk "$KT_TMP/signer.jwk" -- \
	"$SH" -c "$CP $B/src/main.c $B/out/app.c && $NP connect 127.0.0.1 $LPORT_A; $NP connect 127.0.0.1 $LPORT_B; true" \
	>"$T/run.out" 2>"$T/run.err"
rc=$?
check "the build-like job ran to its end under kwitness run and made its artifact" \
	test $rc -eq 0 -a -f "$B/out/app.c"
[ $rc -eq 0 ] || sed 's/^/# /' "$T/run.err" | tail -5
REC=$(sed -n 's/^record: *//p' "$T/run.err") LOG=$(sed -n 's/^log: *//p' "$T/run.err")
[ -f "$REC" ] || { sed 's/^/# /' "$T/run.err" | tail -5; kt_fail_all "no record"; }
BUNDLE=$T/state/policies/$(jq -r .policy.bundle_hash "$REC" | cut -d: -f2)

"$KW" attest --in-toto --record "$REC" --log "$LOG" --policy "$BUNDLE" --key "$KT_TMP/key.pem" \
	--subject "$B/out/app.c" --out "$T/att.json" 2>"$T/attest.err"
expect_eq "attest: the closed session is attested (exit 0)" 0 "$?"
out=$("$KW" verify-attestation --key "$KT_TMP/signer.jwk" "$T/att.json" --subject "$B/out/app.c" --record "$REC")
check "verify-attestation: valid for the artifact and the record" grep -q '^valid: ' <<<"$out"
jq -r .payload "$T/att.json" | base64 -d >"$T/st.json"
P() { jq -c ".predicate$1" "$T/st.json"; }

expect_eq "predicate: exactly the allowed destination reached" \
	"[{\"host\":\"127.0.0.1\",\"port\":$LPORT_A,\"proto\":\"tcp\"}]" "$(P .network)"
expect_eq "predicate: exactly the denied connect, enforced" \
	"1 [{\"enforced\":true,\"host\":\"127.0.0.1\",\"port\":$LPORT_B,\"proto\":\"tcp\",\"rule\":\"net.connect:default\",\"tool\":\"net.connect\"}]" \
	"$(P .denials_total) $(jq -c '[.predicate.denials[] | del(.seq)]' "$T/st.json")"
expect_eq "predicate: the record's policy hash and mode, complete, level 0" \
	"$(jq -r .policy.bundle_hash "$REC") enforce true 0" \
	"$(jq -r '.predicate | "\(.policy.bundle_hash) \(.policy.enforcement_mode) \(.completeness.complete) \(.level)"' "$T/st.json")"
expect_eq "subject: the artifact's SHA-256 (sha256sum)" \
	"$(sha256sum "$B/src/main.c" | cut -d' ' -f1)" "$(jq -r '.subject[0].digest.sha256' "$T/st.json")"

if [ $EXEC -eq 1 ]; then
	want=$(for f in "$SH" "$CP" "$NP"; do sha256sum "$(readlink -f "$f")" | cut -d' ' -f1; done | sort -u | paste -sd' ')
	expect_eq "predicate (exec governed): exactly the programs run, by the kernel's digests = sha256sum" \
		"$want" "$(jq -r '[.predicate.executables[].digest | ltrimstr("sha256:")] | unique | join(" ")' "$T/st.json")"
	expect_eq "predicate: exec coverage true (governed, recorded, complete)" "true true" \
		"$(jq -r '.predicate.coverage | "\(.executables) \(.executable_digests)"' "$T/st.json")"
else
	expect_eq "predicate (no BPF-LSM on $(uname -r)): no executables, exec coverage false" \
		"[] false false" \
		"$(jq -r '"\(.predicate.executables | tojson) \(.predicate.coverage.executables) \(.predicate.coverage.executable_digests)"' "$T/st.json")"
fi
kwd_stop
finish
