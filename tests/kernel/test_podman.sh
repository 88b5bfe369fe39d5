#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# podman (rootful) with `kwitness oci-hook` installed in a hooks directory as
# docs/oci.md says (examples/oci/kwitness.json): an image imported offline
# from a busybox-static tarball, `podman run` of a container that connects to
# an allowed loopback port and a denied one, and `podman kube play` of a
# two-container pod. Checked: EPERM inside the container on the denied port,
# the records verify with --log --policy, and their open entries name the
# container (podman's id, the name given) and the pod (podman's infra
# container id as pod_sandbox_id, the pod's name and namespace).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/kwd_lib.sh"

kwd_require
command -v podman >/dev/null || kt_skip_all "podman is not installed (scripts/deps.sh installs it)"
command -v runc >/dev/null || kt_skip_all "runc is not installed (scripts/deps.sh installs it)"
command -v jq >/dev/null || kt_fail_all "jq is not installed (scripts/deps.sh)"
BUSYBOX=$(command -v busybox || true)
[ -n "$BUSYBOX" ] && file -L "$BUSYBOX" 2>/dev/null | grep -q 'statically linked' ||
	BUSYBOX=/bin/busybox
[ -x "$BUSYBOX" ] || kt_fail_all "busybox (busybox-static) is not installed (scripts/deps.sh)"

IMAGE=localhost/kwitness-test-busybox:$$
POD=kwt$$-pod
podman_cleanup() {
	podman pod rm -f "$POD" >/dev/null 2>&1
	podman rm -f "kwt$$-run" >/dev/null 2>&1
	podman rmi -f "$IMAGE" >/dev/null 2>&1
	kwd_cleanup
}
trap podman_cleanup EXIT

kwd_start
listeners_start
oci_setup

# The hook installed as documented: examples/oci/kwitness.json with its path
# and options set (a hooks directory of the test's own, given with
# --hooks-dir, so the host's podman is left as it was).
HOOKS=$KT_TMP/hooks.d
mkdir -p "$HOOKS"
jq --arg kw "$KW" --arg sock "$KT_SOCK" --arg hs "$KT_TMP/oci-state" --arg pd "$POLDIR" \
	'.hook.path = $kw | .hook.args += ["--socket", $sock, "--state-dir", $hs, "--policy-dir", $pd]' \
	"$KW_ROOT/examples/oci/kwitness.json" >"$HOOKS/kwitness.json"
# runc, not crun: crun refuses this project's hybrid hosts. podman sets
# RLIMIT_NOFILE and RLIMIT_NPROC above what a host without CAP_SYS_RESOURCE
# in its bounding set may raise them to (a container sandbox's): ask for
# limits any process may set.
export CONTAINERS_CONF=$KT_TMP/containers.conf
cat >"$CONTAINERS_CONF" <<'EOF'
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]
[engine]
runtime = "runc"
EOF
PODMAN=(podman --hooks-dir "$HOOKS" --cgroup-manager cgroupfs)

# The image: busybox-static and its applets, imported from a tarball (no registry).
mkdir -p "$KT_TMP/rootfs/bin"
cp "$BUSYBOX" "$KT_TMP/rootfs/bin/busybox"
for c in sh nc echo sleep; do ln -s busybox "$KT_TMP/rootfs/bin/$c"; done
tar -C "$KT_TMP/rootfs" -cf "$KT_TMP/image.tar" . &&
	podman import -q --change "ENV PATH=/bin" "$KT_TMP/image.tar" "$IMAGE" >/dev/null ||
	kt_fail_all "podman import of the busybox image failed"

# The record whose open entry names container id CID: REC, LOG, POL, OPEN.
find_record_of() {
	local r l
	REC= LOG= POL= OPEN=
	for l in "$STATE"/logs/*.jsonl; do
		[ -f "$l" ] || continue
		[ "$(head -1 "$l" | jq -r .container_id)" = "$1" ] || continue
		LOG=$l
		REC=$STATE/records/$(basename "$l" .jsonl).json
		OPEN=$(head -1 "$l")
	done
	[ -n "$LOG" ] && [ -f "$REC" ] || return 1
	r=$(jq -r .policy.bundle_hash "$REC")
	POL=$STATE/policies/${r#sha256:}
}

# The record verifies; else its verdict is shown.
check_verifies() { # WHAT
	if verify_record; then
		ok "$1: the record verifies with --log and --policy"
	else
		not_ok "$1: the record does not verify"
		"$KW" verify --key "$KT_TMP/signer.jwk" --log "$LOG" --policy "$POL" "$REC" | sed 's/^/#   /'
	fi
}

# The container's output: the allowed connection worked, the denied one
# failed with EPERM.
check_probe() { # WHAT OUTPUT
	if grep -qx 'allowed=0' <<<"$2"; then
		ok "$1: the allowed connection succeeded inside the container"
	else
		not_ok "$1: the allowed connection"
		sed 's/^/#   /' <<<"$2" | head -10
	fi
	if grep -q "can't connect to remote host.*Operation not permitted" <<<"$2" &&
		grep -qx 'denied=1' <<<"$2"; then
		ok "$1: the denied connection failed with EPERM inside the container"
	else
		not_ok "$1: the denied connection did not fail with EPERM"
		sed 's/^/#   /' <<<"$2" | head -10
	fi
}

# --- podman run -------------------------------------------------------------
OUT=$(timeout 120 "${PODMAN[@]}" run --name "kwt$$-run" --cidfile "$KT_TMP/run.cid" \
	--network host --annotation io.kwitness.policy=oci.json \
	--annotation io.kwitness.container-name=agent "$IMAGE" sh -c "$PROBE" 2>&1)
RC=$?
CID=$(cat "$KT_TMP/run.cid" 2>/dev/null)
[ $RC -eq 0 ] || { echo "# podman run: rc $RC"; sed 's/^/#   /' <<<"$OUT" | head -10; }
check_probe "podman run" "$OUT"
"${PODMAN[@]}" rm -f "kwt$$-run" >/dev/null 2>&1
if find_record_of "$CID"; then
	check_verifies "podman run"
	expect_eq "podman run: the open entry names the container" \
		"agent spiffe://kwitness.local/oci/$CID" \
		"$(jq -r '"\(.container_name) \(.sandbox_id)"' <<<"$OPEN")"
	deny=$(decisions "$LOG" | grep "\"port\":$LPORT_B" | head -1)
	check "podman run: the log holds the enforced deny from nc" \
		test "$(jfield "$deny" decision)/$(jfield "$deny" enforced)/$(jfield "$deny" comm)" = deny/true/nc
else
	not_ok "podman run: no record names container ${CID:-(no id)}"
fi

# --- podman kube play: a pod of two containers -------------------------------
cat >"$KT_TMP/pod.yaml" <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $POD
  annotations:
    io.kwitness.policy: oci.json
    io.kwitness.pod-namespace: team-a
    io.kwitness.pod-name: $POD
spec:
  hostNetwork: true
  restartPolicy: Never
  containers:
  - name: probe
    image: $IMAGE
    command: ["sh", "-c", "$PROBE"]
  - name: side
    image: $IMAGE
    command: ["echo", "side"]
EOF
OUT=$(timeout 120 "${PODMAN[@]}" kube play "$KT_TMP/pod.yaml" 2>&1) ||
	{ echo "# podman kube play failed"; sed 's/^/#   /' <<<"$OUT" | head -10; }
for _ in $(seq 100); do
	[ "$(podman ps --filter "pod=$POD" --filter status=running -q | wc -l)" -le 1 ] && break
	sleep 0.2
done
INFRA=$(podman pod inspect "$POD" --format '{{.InfraContainerID}}' 2>/dev/null)
PROBE_ID=$(podman inspect "$POD-probe" --format '{{.Id}}' 2>/dev/null)
SIDE_ID=$(podman inspect "$POD-side" --format '{{.Id}}' 2>/dev/null)
check_probe "kube play" "$(podman logs "$POD-probe" 2>&1)"
"${PODMAN[@]}" pod rm -f "$POD" >/dev/null 2>&1 # stops them: poststop closes the sessions
for c in probe side; do
	id=$PROBE_ID
	[ $c = side ] && id=$SIDE_ID
	if ! find_record_of "$id"; then
		not_ok "kube play: no record names container $c (${id:-no id})"
		continue
	fi
	check_verifies "kube play: $c"
	expect_eq "kube play: $c: the open entry names the pod (podman's infra id) and the container" \
		"team-a $POD $INFRA $id" \
		"$(jq -r '"\(.pod_namespace) \(.pod_name) \(.pod_sandbox_id) \(.container_id)"' <<<"$OPEN")"
done
infra_left_alone() { [ -n "$INFRA" ] && ! grep -qs "\"container_id\":\"$INFRA\"" "$STATE"/logs/*.jsonl; }
check "kube play: podman's infra container was left alone (no record)" infra_left_alone
expect_eq "no session is left open" "no open sessions" "$("$KW" session list --socket "$KT_SOCK")"
finish
