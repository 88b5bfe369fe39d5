#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kwitness oci-hook and the pod identity, without a collector: a CRI pod's
# pause container is left alone even with a policy annotation; a kwitness
# annotation that renames what CRI named, or a hostile name, stops the
# container with one line; a bad --pod-sandbox-id template too; run in a user
# namespace (as rootless podman runs hooks) the hook refuses with its reason.
# (tests/unit/test_oci_identity.c checks the fields; tests/kernel/test_podman.sh
# and test_containerd.sh the records.)
. "$(dirname "$0")/../lib.sh"

T=$(mktemp -d /tmp/kwitness-ociid.XXXXXX)
trap 'rm -rf "$T"' EXIT
B=$T/bundle P=$T/policies
mkdir -p "$B/rootfs" "$P"
chmod 755 "$P"
printf '{"kwitness_policy":1,"mode":"enforce","net":{"connect":[]}}' >"$P/policy.json"
config() { printf '{"ociVersion":"1.0.2","root":{"path":"rootfs"},"annotations":%s}' "$1" >"$B/config.json"; }
STATE=$(printf '{"ociVersion":"1.0.2","id":"c1","status":"creating","pid":%s,"bundle":"%s"}' $$ "$B")
hook() { printf '%s' "$STATE" | timeout 20 "$KW" oci-hook --socket "$T/none.sock" \
	--state-dir "$T/hs" --policy-dir "$P" "$@" >"$T/out" 2>"$T/err"; echo $?; }
oneline() { [ "$(wc -l <"$T/err")" -eq 1 ] && grep -qF "kwitness oci-hook: c1: $1" "$T/err"; }
CRI='"io.kwitness.policy":"policy.json","io.kubernetes.cri.sandbox-namespace":"team-a","io.kubernetes.cri.sandbox-name":"web","io.kubernetes.cri.container-name":"agent"'

config "{$CRI,\"io.kubernetes.cri.container-type\":\"sandbox\"}"
expect_eq "a CRI pod's pause container: nothing to do (0)" 0 "$(hook)"
check "... silently" test ! -s "$T/err"

config "{$CRI,\"io.kubernetes.cri.container-type\":\"container\"}"
expect_eq "a CRI container, kwitnessd unreachable: 1 (it is governed)" 1 "$(hook)"
check "... failing at kwitnessd, past the identity" oneline "cannot reach kwitnessd"

config "{$CRI,\"io.kwitness.pod-name\":\"admin\"}"
expect_eq "io.kwitness.pod-name renaming CRI's pod: 1" 1 "$(hook)"
check "... named" oneline "annotation io.kwitness.pod-name: the runtime already names it (io.kubernetes.cri.sandbox-name)"
config '{"io.kwitness.policy":"policy.json","io.kubernetes.cri.sandbox-name":"we\u001b[2Jb"}'
expect_eq "a pod name with a control character: 1" 1 "$(hook)"
check "... named, without the character" oneline "annotation io.kubernetes.cri.sandbox-name: not a name"
config "{$CRI}"
expect_eq "a --pod-sandbox-id template with an unknown name: 1" 1 "$(hook --pod-sandbox-id 'spiffe://x/{podname}')"
check "... named" oneline "the pod sandbox id template spiffe://x/{podname}: an unknown {name}"
expect_eq "a template that makes no spiffe:// or did: URI, from the environment: 1" 1 \
	"$(KWITNESS_OCI_POD_SANDBOX_ID='https://x/{pod}' hook)"
check "... named" oneline "the pod sandbox id template https://x/{pod} does not make a spiffe:// or did: URI"

if unshare -U -r true 2>/dev/null; then
	config '{"io.kwitness.policy":"policy.json"}'
	rc=$(printf '%s' "$STATE" | unshare -U -r "$KW" oci-hook --socket "$T/none.sock" \
		--state-dir "$T/hs" --policy-dir "$P" >"$T/out" 2>"$T/err"; echo $?)
	expect_eq "in a user namespace (rootless podman): 1" 1 "$rc"
	check "... saying why" oneline "the hook runs in a user namespace (a rootless runtime, such as rootless podman)"
	config '{}'
	rc=$(printf '%s' "$STATE" | unshare -U -r "$KW" oci-hook --socket "$T/none.sock" \
		--state-dir "$T/hs" --policy-dir "$P" 2>"$T/err"; echo $?)
	expect_eq "... a container without io.kwitness.policy is left alone there (0)" 0 "$rc"
else
	skip "unshare -U cannot make a user namespace here"
	skip "unshare -U cannot make a user namespace here"
	skip "unshare -U cannot make a user namespace here"
fi
finish
