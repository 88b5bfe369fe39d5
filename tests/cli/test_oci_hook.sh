#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kwitness oci-hook without a collector or a container: what it does with the
# state and config.json a runtime gives it. No io.kwitness.policy: nothing,
# exit 0. A bad state, a bad annotation, an unreachable kwitnessd: exit 1 and
# one line naming the container, unless io.kwitness.on-error is allow (exit 0,
# the same line saying the container runs unrecorded). podman's oci-hooks.d
# entry is well formed. (tests/kernel/test_oci_runtimes.sh runs real containers.)
. "$(dirname "$0")/../lib.sh"

T=$(mktemp -d /tmp/kwitness-ocitest.XXXXXX)
trap 'rm -rf "$T"' EXIT
B=$T/bundle
mkdir -p "$B/rootfs/bin"
printf '{"kwitness_policy":1,"mode":"enforce","net":{"connect":[]}}' >"$B/policy.json"

# config ANNOTATIONS-JSON: writes the bundle's config.json
config() { printf '{"ociVersion":"1.0.2","root":{"path":"rootfs"},"annotations":%s}' "$1" >"$B/config.json"; }
state() { printf '{"ociVersion":"1.0.2","id":"%s","status":"%s","pid":%s,"bundle":"%s"}' \
	"${1:-c1}" "${2:-creating}" "${3:-$$}" "${4:-$B}"; }
# hook STATE [ARGS]: runs the hook, prints its exit status; stderr in $T/err
hook() { local s=$1; shift; printf '%s' "$s" | "$KW" oci-hook --socket "$T/none.sock" \
	--state-dir "$T/hs" "$@" >"$T/out" 2>"$T/err"; echo $?; }
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
expect_eq "poststop with no session: 1" 1 "$(hook "$(state c1 stopped)")"

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
ln -s "$B/policy.json" "$B/config.json"
expect_eq "config.json a symbolic link: 1" 1 "$(hook "$(state)")"
rm "$B/config.json"

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
