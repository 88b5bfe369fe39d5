#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# examples/kubernetes offline: every manifest checked against the Kubernetes
# API's types (tests/helpers/k8s_schema_check.py on Debian's
# python3-kubernetes; no cluster), and a manifest with a misspelt field or a
# wrong type is caught by the same check. The DaemonSet asks for what
# kwitnessd needs and no more (host PID, bpffs, cgroup and state from the
# host, the five capabilities of the systemd unit, not privileged); the
# example pod names a policy of the ConfigMap; the containerd configuration
# names the base spec kwitness-base-spec.sh makes, and lets only the policy
# annotation through; that spec runs the hook at createRuntime and poststop.
# (tests/kernel/test_containerd.sh runs containerd with them.)
. "$(dirname "$0")/../lib.sh"

K=$KW_ROOT/examples/kubernetes
T=$(mktemp -d /tmp/kwitness-k8s.XXXXXX)
trap 'rm -rf "$T"' EXIT
if ! /usr/bin/python3 -c 'import kubernetes, yaml' 2>/dev/null || ! command -v jq >/dev/null; then
	skip "python3-kubernetes, python3-yaml or jq is not installed (scripts/deps.sh installs them)"
	finish
fi
CHECK=(/usr/bin/python3 "$KW_ROOT/tests/helpers/k8s_schema_check.py")

out=$("${CHECK[@]}" "$K"/*.yaml)
expect_eq "the manifests match the Kubernetes API's types" "5 objects checked, 0 problems" "$out"
sed -e 's/hostPID: true/hostPid: true/' "$K/kwitnessd-daemonset.yaml" >"$T/typo.yaml"
check "... a misspelt field is caught (hostPid)" \
	grep -q 'hostPid is not a field of V1PodSpec' <<<"$("${CHECK[@]}" "$T/typo.yaml")"
sed -e 's/hostPID: true/hostPID: "true"/' "$K/kwitnessd-daemonset.yaml" >"$T/type.yaml"
check "... a wrong type is caught (hostPID: \"true\")" \
	grep -q "hostPID: 'true' is not bool" <<<"$("${CHECK[@]}" "$T/type.yaml")"

# the DaemonSet as JSON, for jq
DS=$(/usr/bin/python3 -c 'import json, sys, yaml
print(json.dumps([d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] == "DaemonSet"][0]))' \
	"$K/kwitnessd-daemonset.yaml")
P='.spec.template.spec'
expect_eq "DaemonSet: host PID, no service account token" "true false" \
	"$(jq -r "[$P.hostPID, $P.automountServiceAccountToken] | map(tostring) | join(\" \")" <<<"$DS")"
expect_eq "DaemonSet: kwitnessd drops every capability but BPF PERFMON NET_ADMIN CHOWN KILL, not privileged" \
	"ALL BPF,CHOWN,KILL,NET_ADMIN,PERFMON false false" \
	"$(jq -r "$P.containers[0].securityContext | [(.capabilities.drop | join(\",\")),
		(.capabilities.add | sort | join(\",\")), (.privileged | tostring),
		(.allowPrivilegeEscalation | tostring)] | join(\" \")" <<<"$DS")"
expect_eq "DaemonSet: bpffs, cgroup, state and socket folders from the host" \
	"/run/kwitness /sys/fs/bpf /sys/fs/cgroup /var/lib/kwitness" \
	"$(jq -r "$P as \$s | [\$s.containers[0].volumeMounts[].name as \$n |
		\$s.volumes[] | select(.name == \$n) | .hostPath.path // empty] | sort | join(\" \")" <<<"$DS")"
expect_eq "DaemonSet: kwitnessd's socket and state are where the mounts are" \
	"--state-dir=/var/lib/kwitness --socket=/run/kwitness/kwitnessd.sock" \
	"$(jq -r "$P.containers[0].args | map(select(startswith(\"--state-dir\") or startswith(\"--socket\"))) | join(\" \")" <<<"$DS")"

pol=$(/usr/bin/python3 -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["metadata"]["annotations"]["io.kwitness.policy"])' "$K/example-pod.yaml")
keys=$(/usr/bin/python3 -c 'import sys, yaml; print(" ".join(yaml.safe_load(open(sys.argv[1]))["data"]))' "$K/policies-configmap.yaml")
check "the example pod's io.kwitness.policy ($pol) is a key of the ConfigMap ($keys)" \
	grep -qw -- "$pol" <<<"$keys"
check "... and that policy is JSON" /usr/bin/python3 -c 'import json, sys, yaml
json.loads(yaml.safe_load(open(sys.argv[1]))["data"][sys.argv[2]])' "$K/policies-configmap.yaml" "$pol"

expect_eq "containerd: the runc runtime's base spec and only the policy annotation from pods" \
	'/etc/containerd/kwitness-base-spec.json ["io.kwitness.policy"]' \
	"$(/usr/bin/python3 -c 'import json, sys, tomllib
r = tomllib.load(open(sys.argv[1], "rb"))["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]["runc"]
print(r["base_runtime_spec"], json.dumps(r["pod_annotations"]))' "$K/containerd-kwitness.toml")"
if command -v ctr >/dev/null; then
	expect_eq "kwitness-base-spec.sh: the hook at createRuntime and poststop, with the options given" \
		'/opt/kwitness/bin/kwitness kwitness oci-hook --socket /run/x.sock|/opt/kwitness/bin/kwitness kwitness oci-hook --socket /run/x.sock' \
		"$("$K/kwitness-base-spec.sh" /opt/kwitness/bin/kwitness --socket /run/x.sock |
			jq -r '[.hooks.createRuntime[], .hooks.poststop[] | "\(.path) \(.args | join(" "))"] | join("|")')"
else
	skip "ctr (containerd) is not installed (scripts/deps.sh installs it)"
fi
finish
