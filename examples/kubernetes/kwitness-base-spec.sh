#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Prints containerd's default OCI spec (`ctr oci spec`) with kwitness oci-hook
# at createRuntime and poststop: the base_runtime_spec of
# containerd-kwitness.toml. Usage:
#   kwitness-base-spec.sh [HOOK [HOOK-OPTION...]] > /etc/containerd/kwitness-base-spec.json
# HOOK defaults to /opt/kwitness/bin/kwitness (where the DaemonSet puts it);
# options go to `kwitness oci-hook` (--socket, --policy-dir, --pod-sandbox-id ...).
set -eu
hook=${1:-/opt/kwitness/bin/kwitness}
[ $# -gt 0 ] && shift
# the options as a JSON array (jq would take "--socket" for its own option)
args=$(for a in "$@"; do printf '%s\n' "$a"; done | jq -R . | jq -cs .)
ctr oci spec | jq --arg hook "$hook" --argjson args "$args" '
	{path: $hook, args: (["kwitness", "oci-hook"] + $args)} as $h |
	.hooks.createRuntime = [$h] | .hooks.poststop = [$h]'
