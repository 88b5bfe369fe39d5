#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kwitness oci-hook without a collector or a container: what it does with the
# state and config.json a runtime gives it. No io.kwitness.policy: nothing,
# exit 0. A bad state, a bad annotation, an unreachable kwitnessd: exit 1 and
# one line naming the container, unless io.kwitness.on-error is allow (exit 0,
# the same line saying the container runs unrecorded). podman's oci-hooks.d
# entry is well formed. Hostile policy annotations (.., absolute, a symbolic
# link, a FIFO, a huge file, a file whose content a refusal would quote) are
# refused promptly, naming the rule and never the content; a kwitnessd that
# never answers makes the hook fail at its deadline.
# (tests/kernel/test_oci_runtimes.sh runs real containers.)
. "$(dirname "$0")/../lib.sh"

T=$(mktemp -d /tmp/kwitness-ocitest.XXXXXX)
trap 'rm -rf "$T"' EXIT
B=$T/bundle P=$T/policies
mkdir -p "$B/rootfs/bin" "$P"
chmod 755 "$P"
printf '{"kwitness_policy":1,"mode":"enforce","net":{"connect":[]}}' >"$P/policy.json"

# config ANNOTATIONS-JSON: writes the bundle's config.json
config() { printf '{"ociVersion":"1.0.2","root":{"path":"rootfs"},"annotations":%s}' "$1" >"$B/config.json"; }
state() { printf '{"ociVersion":"1.0.2","id":"%s","status":"%s","pid":%s,"bundle":"%s"}' \
	"${1:-c1}" "${2:-creating}" "${3:-$$}" "${4:-$B}"; }
# hook STATE [ARGS]: runs the hook, prints its exit status; stderr in $T/err
hook() { local s=$1; shift; printf '%s' "$s" | timeout 20 "$KW" oci-hook --socket "$T/none.sock" \
	--state-dir "$T/hs" --policy-dir "$P" "$@" >"$T/out" 2>"$T/err"; echo $?; }
oneline() { [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "^kwitness oci-hook: $1" "$T/err"; }

expect_eq "--help: 0" 0 "$(printf '' | "$KW" oci-hook --help >/dev/null; echo $?)"
expect_eq "an unknown stage: usage (2)" 2 "$(hook "$(state)" prestart)"
expect_eq "two stages: usage (2)" 2 "$(hook "$(state)" createRuntime poststop)"

config '{"org.example":"x"}'
expect_eq "no io.kwitness.policy: nothing to do (0)" 0 "$(hook "$(state)")"
check "... silently" test ! -s "$T/err"
expect_eq "... at poststop too" 0 "$(hook "$(state c1 stopped)")"

config '{"io.kwitness.policy":"policy.json"}'
expect_eq "stdin not JSON: 1" 1 "$(hook 'not json')"
check "... one line" oneline "(no valid id): the container state on stdin is not a JSON object"
expect_eq "an id with a slash: 1" 1 "$(hook "$(state ../x)")"
check "... refused before it names anything" oneline "(no valid id): the state's id is missing"
expect_eq "a relative bundle: 1" 1 "$(hook "$(state c1 creating $$ bundle)")"
expect_eq "a status no stage serves, no stage named: 1" 1 "$(hook "$(state c1 running)")"
check "... says which stages it serves" oneline 'c1: status "running" is not a stage'
expect_eq "kwitnessd unreachable: 1 (fail closed)" 1 "$(hook "$(state)" createRuntime)"
check "... with one line saying so" oneline "c1: cannot reach kwitnessd at $T/none.sock"
# runc runs poststop after a failed createRuntime: no error there to come
# before the real reason (issue 38)
expect_eq "poststop with no session (no state folder): 0" 0 "$(hook "$(state c1 stopped)")"
check "... one line: nothing to close" oneline "c1: poststop: no session was opened for this container (nothing to close)"
mkdir -p "$T/hs" && chmod 700 "$T/hs"
expect_eq "poststop with no session (no state file): 0" 0 "$(hook "$(state c1 stopped)")"
check "... one line: nothing to close" oneline "c1: poststop: no session was opened for this container (nothing to close)"

config '{"io.kwitness.policy":"policy.json","io.kwitness.on-error":"allow"}'
expect_eq "on-error allow: the same failure exits 0" 0 "$(hook "$(state)" createRuntime)"
check "... and says the container runs unrecorded" grep -q "the container runs unrecorded" "$T/err"

config '{"io.kwitness.policy":"policy.json","io.kwitness.on-error":"maybe"}'
expect_eq "on-error neither allow nor deny: 1" 1 "$(hook "$(state)")"
check "... named" oneline "c1: annotation io.kwitness.on-error"
config '{"io.kwitness.policy":"policy.json","io.kwitness.sandbox":"typo"}'
expect_eq "an unknown io.kwitness annotation: 1" 1 "$(hook "$(state)")"
check "... named" oneline "c1: unknown annotation io.kwitness.sandbox"
config '{"io.kwitness.policy":"policy.json","io.kwitness.image-digest":"sha256:12"}'
expect_eq "a malformed image digest: 1" 1 "$(hook "$(state)")"
check "... named" oneline "c1: annotation io.kwitness.image-digest"
config '{"io.kwitness.policy":""}'
expect_eq "an empty policy annotation: 1" 1 "$(hook "$(state)")"
printf '[1]' >"$B/config.json"
expect_eq "config.json not an object: 1" 1 "$(hook "$(state)")"
rm "$B/config.json"
ln -s "$P/policy.json" "$B/config.json"
expect_eq "config.json a symbolic link: 1" 1 "$(hook "$(state)")"
rm "$B/config.json"

# --- hostile policy annotations ------------------------------------------------
SECRET="TOPSECRET-$$-do-not-print"
printf '%s\n' "$SECRET" >"$T/secret"
# pol NAME: the createRuntime hook for a container whose policy annotation is NAME
pol() { config "$(jq -cn --arg p "$1" '{"io.kwitness.policy":$p}')"; hook "$(state)" createRuntime; }
no_secret() { ! grep -qF "$SECRET" "$T/err" && ! grep -qF "$SECRET" "$T/out"; }
for name in .. . ../secret "$T/secret" /etc/passwd sub/policy.json .hidden; do
	expect_eq "policy annotation '$name': refused (1)" 1 "$(pol "$name")"
	check "... naming the annotation and the rule" \
		oneline "c1: annotation io.kwitness.policy: not a file name of the policy folder"
done
check "... never the content of what it names" no_secret
ln -s "$T/secret" "$P/link.json"
expect_eq "a symbolic link in the policy folder: refused (1)" 1 "$(pol link.json)"
check "... as a link, not followed" oneline "c1: annotation io.kwitness.policy: link.json in $P: a symbolic link, not followed"
check "... its target's content not shown" no_secret
mkfifo "$P/fifo.json"
t0=$(date +%s%N)
expect_eq "a FIFO in the policy folder: refused (1), not waited on" 1 "$(pol fifo.json)"
check "... within 2 s" test $((($(date +%s%N) - t0) / 1000000)) -lt 2000
check "... as not a regular file" oneline "c1: annotation io.kwitness.policy: fifo.json in $P: not a regular file"
mkdir "$P/dir.json"
expect_eq "a folder named like a policy: refused (1)" 1 "$(pol dir.json)"
truncate -s 64M "$P/huge.json"
expect_eq "a 64 MiB file: refused (1)" 1 "$(pol huge.json)"
check "... by the bundle limit" oneline "c1: annotation io.kwitness.policy: huge.json in $P: larger than the bundle limit"
expect_eq "a missing file: refused (1)" 1 "$(pol missing.json)"
check "... saying so" oneline "c1: annotation io.kwitness.policy: missing.json in $P: No such file or directory"
chmod 777 "$P"
expect_eq "a policy folder others may write: refused (1)" 1 "$(pol policy.json)"
check "... saying so" oneline "c1: annotation io.kwitness.policy: the policy folder $P is not owned by root or is writable by others"
chmod 755 "$P"

# A stand-in kwitnessd on a socket: "stall" accepts and never answers;
# "quote" answers ping and refuses every open quoting the policy's first
# bytes back, as a parser's message may.
fake_kwd() {
	rm -f "$T/fake.sock"
	python3 - "$1" "$T/fake.sock" <<'PY' &
import json, socket, sys
mode, path = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX)
s.bind(path)
s.listen(16)
held = []
while True:
    c, _ = s.accept()
    if mode == "stall":
        held.append(c)
        continue
    data = b""
    while b"\n" not in data:
        chunk = c.recv(65536)
        if not chunk:
            break
        data += chunk
    req = json.loads(data)
    if req.get("op") == "ping":
        reply = {"ok": True}
    else:
        reply = {"ok": False, "error": "policy_invalid",
                 "message": "policy: unexpected text near '%s'" % req.get("policy", "")[:60]}
    c.sendall(json.dumps(reply).encode() + b"\n")
    c.close()
PY
	FAKE=$!
	for _ in $(seq 50); do [ -S "$T/fake.sock" ] && return; sleep 0.1; done
}
# fhook STATE [ARGS]: the hook on the stand-in's socket
fhook() { local s=$1; shift; printf '%s' "$s" | timeout 20 "$KW" oci-hook --socket "$T/fake.sock" \
	--state-dir "$T/hs" --policy-dir "$P" "$@" >"$T/out" 2>"$T/err"; echo $?; }
if command -v python3 >/dev/null; then
	printf '%s\n' "$SECRET" >"$P/secret.json"
	config '{"io.kwitness.policy":"secret.json","io.kwitness.image-digest":"sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}'
	fake_kwd quote
	expect_eq "kwitnessd refuses the named policy: 1" 1 "$(fhook "$(state)" createRuntime)"
	check "... the error names the annotation and kwitnessd's code" \
		oneline "c1: annotation io.kwitness.policy: secret.json in $P: kwitnessd refused the policy (policy_invalid)"
	check "... and not the file's content that the refusal quoted" no_secret
	kill "$FAKE"; wait "$FAKE" 2>/dev/null
	config '{"io.kwitness.policy":"policy.json","io.kwitness.image-digest":"sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}'
	fake_kwd stall
	t0=$(date +%s%N)
	expect_eq "a kwitnessd that never answers: createRuntime fails (1)" 1 \
		"$(fhook "$(state)" createRuntime --timeout 2)"
	ms=$((($(date +%s%N) - t0) / 1000000))
	check "... at its deadline of 2 s (took $ms ms)" test "$ms" -ge 1900 -a "$ms" -lt 5000
	check "... saying so" oneline "c1: the stage did not finish within its deadline of 2 s"
	# poststop's session, as createRuntime would have left it
	mkdir -p -m 700 "$T/hs"
	printf '{"session":"x","cgroup":"/nonexistent"}' >"$T/hs/c1.json"
	t0=$(date +%s%N)
	expect_eq "... poststop too, from \$KWITNESS_OCI_TIMEOUT (1)" 1 \
		"$(KWITNESS_OCI_TIMEOUT=1 fhook "$(state c1 stopped)")"
	ms=$((($(date +%s%N) - t0) / 1000000))
	check "... within its deadline of 1 s (took $ms ms)" test "$ms" -lt 4000
	rm -f "$T/hs/c1.json"
	config '{"io.kwitness.policy":"policy.json","io.kwitness.on-error":"allow","io.kwitness.image-digest":"sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}'
	expect_eq "... with on-error allow: 0 at the deadline" 0 "$(fhook "$(state)" createRuntime --timeout 1)"
	check "... saying the container runs unrecorded" grep -q "deadline.*the container runs unrecorded" "$T/err"
	kill "$FAKE"; wait "$FAKE" 2>/dev/null
else
	for _ in 1 2 3 4 5 6 7 8 9 10; do skip "python3 is not installed (scripts/deps.sh)"; done
fi
expect_eq "--timeout 0: usage (2)" 2 "$(hook "$(state)" --timeout 0)"

J=$KW_ROOT/examples/oci/kwitness.json
if command -v jq >/dev/null; then
	expect_eq "oci-hooks.d entry: version, stages, the policy annotation as condition" \
		'1.0.0 createRuntime,poststop .+' \
		"$(jq -r '[.version, (.stages | join(",")), .when.annotations["^io\\.kwitness\\.policy$"]] | join(" ")' "$J")"
	expect_eq "oci-hooks.d entry: runs kwitness oci-hook, stage from the state" \
		'kwitness oci-hook' "$(jq -r '.hook.args | join(" ")' "$J")"
else
	skip "jq is not installed (scripts/deps.sh)"
	skip "jq is not installed (scripts/deps.sh)"
fi
finish
