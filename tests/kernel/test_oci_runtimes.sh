#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `kwitness oci-hook` with the real runtimes, Debian's runc and crun: a
# busybox-static rootfs, config.json from `runc spec` plus the hooks and the
# io.kwitness.* annotations, a container that connects to an allowed port and
# a denied one. Checked: what the process inside saw (EPERM on the denied
# port), that the record verifies with --log --policy, that a container whose
# policy file is missing or is a FIFO does not start, that on-error allow lets it run
# unrecorded, that a container without the policy annotation is left alone,
# and that a cgroup the container shares with another process is never tagged
# (the hook makes a dedicated child cgroup).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/kwd_lib.sh"

kwd_require
BUSYBOX=$(command -v busybox || true)
[ -n "$BUSYBOX" ] && file -L "$BUSYBOX" 2>/dev/null | grep -q 'statically linked' ||
	BUSYBOX=/bin/busybox
[ -x "$BUSYBOX" ] || kt_fail_all "busybox (busybox-static) is not installed (scripts/deps.sh)"
command -v jq >/dev/null || kt_fail_all "jq is not installed (scripts/deps.sh)"

OCI_IDS=() V1_MOUNTS=()
oci_cleanup() {
	local id rt
	for id in "${OCI_IDS[@]}"; do
		rt=${id##*-}
		"$rt" --root "$KT_TMP/$rt-root" delete -f "$id" >/dev/null 2>&1
	done
	for m in "${V1_MOUNTS[@]}"; do umount "$m" 2>/dev/null; done
	# the runtimes' killed processes may take a moment to leave the shared
	# cgroups: remove what kwd_cleanup could not, once they have
	local cg=$KT_CG
	kwd_cleanup
	for _ in $(seq 50); do
		[ -d "$cg" ] || break
		find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null
		sleep 0.1
	done
}
trap oci_cleanup EXIT

kwd_start
listeners_start
HOOKSTATE=$KT_TMP/oci-state
oci_setup

# make_bundle RUNTIME NAME [JQ-FILTER]: a bundle with a busybox rootfs and a
# config.json from `runc spec`, the host network (to reach the listeners), the
# hooks (with the stage argument, or without it when STAGE_ARG=false: then the
# hook takes the stage from the state's status, as podman's oci-hooks.d entry
# examples/oci/kwitness.json has it) and the policy annotation (and crun's run.oci.hooks.stderr, since crun
# does not show a hook's stderr otherwise); the filter edits it further.
# Prints its path.
make_bundle() {
	local rt=$1 name=$2 filter=${3:-.} b=$KT_TMP/$2
	mkdir -p "$b/rootfs/bin" "$b/rootfs/tmp"
	cp "$BUSYBOX" "$b/rootfs/bin/busybox"
	for c in sh nc echo cat sleep; do ln -sf busybox "$b/rootfs/bin/$c"; done
	(cd "$b" && runc spec) || return 1
	jq --arg kw "$KW" --arg sock "$KT_SOCK" --arg hs "$HOOKSTATE" --arg pd "$POLDIR" \
		--argjson stage "${STAGE_ARG:-true}" \
		--arg sid "spiffe://test.kwitness.local/oci/$name" --arg probe "$PROBE" '
		.process.terminal = false | .process.args = ["sh", "-c", $probe] |
		.linux.namespaces |= map(select(.type != "network")) |
		.hooks.createRuntime = [{path: $kw, args: (["kwitness", "oci-hook", "--socket", $sock,
			"--state-dir", $hs, "--policy-dir", $pd] + if $stage then ["createRuntime"] else [] end)}] |
		.hooks.poststop = [{path: $kw, args: (["kwitness", "oci-hook", "--socket", $sock,
			"--state-dir", $hs, "--policy-dir", $pd] + if $stage then ["poststop"] else [] end)}] |
		.annotations["io.kwitness.policy"] = "oci.json" |
		.annotations["io.kwitness.sandbox-id"] = $sid |
		.annotations["run.oci.hooks.stderr"] = ($b + "/hooks.err")' --arg b "$b" "$b/config.json" |
		jq "$filter" >"$b/config.json.new" && mv "$b/config.json.new" "$b/config.json" || return 1
	echo "$b"
}

# pivot_root cannot leave an initramfs root (the test VM's): there the
# runtimes' own --no-pivot (a move mount and chroot) is used instead.
NO_PIVOT=()
[ "$(awk '$5 == "/" { split($0, a, " - "); split(a[2], b, " "); print b[1]; exit }' /proc/self/mountinfo)" = rootfs ] &&
	NO_PIVOT=(--no-pivot)

# run_container RUNTIME NAME BUNDLE: runs it to the end; sets OUT (stdout and
# stderr of the runtime and the container) and RC.
run_container() {
	local rt=$1 id="kwt$$-$2-$1"
	OCI_IDS+=("$id")
	OUT=$(cd "$3" && timeout 120 "$rt" --root "$KT_TMP/$rt-root" run "${NO_PIVOT[@]}" "$id" 2>&1)
	RC=$?
	# crun writes a hook's stderr where run.oci.hooks.stderr says, not its own
	[ -f "$3/hooks.err" ] && OUT+=$'\n'$(cat "$3/hooks.err")
	"$rt" --root "$KT_TMP/$rt-root" delete -f "$id" >/dev/null 2>&1
}

# The record, log and bundle kwitnessd wrote for sandbox SID: REC, LOG, POL.
find_record() {
	local r h
	REC= LOG= POL=
	for r in "$STATE"/records/*.json; do
		[ -f "$r" ] && [ "$(jq -r .subject "$r")" = "$1" ] && REC=$r
	done
	[ -n "$REC" ] || return 1
	LOG=$STATE/logs/$(basename "$REC" .json).jsonl
	h=$(jq -r .policy.bundle_hash "$REC")
	POL=$STATE/policies/${h#sha256:}
	[ -f "$LOG" ] && [ -f "$POL" ]
}

# The documented rootfs listing digest (docs/oci.md), re-derived with find,
# stat and sha256sum (no escaping: this rootfs has plain names only, checked).
rootfs_listing_digest() {
	local root=$1 p rel raw mode type size line
	{
		printf 'kwitness-rootfs-listing v1\n'
		find "$root" -mindepth 1 | while IFS= read -r p; do
			rel=${p#"$root"/}
			[ "$rel" = "$(printf '%s' "$rel" | tr -cd '\041-\044\046-\176')" ] || { echo "odd name: $rel" >&2; return 1; }
			read -r raw uid gid size <<<"$(stat -c '%f %u %g %s' "$p")"
			mode=$((16#$raw))
			case $((mode & 8#170000)) in
			$((8#040000))) type=d size=0 ;;
			$((8#100000))) type=f ;;
			$((8#120000))) type=l ;;
			$((8#020000))) type=c size=0 ;;
			$((8#060000))) type=b size=0 ;;
			$((8#010000))) type=p size=0 ;;
			*) type=s size=0 ;;
			esac
			line=$(printf '%s %04o %s:%s %s %s' "$type" $((mode & 8#7777)) "$uid" "$gid" "$size" "$rel")
			[ "$type" = l ] && line="$line -> $(readlink "$p")"
			printf '%s\n' "$line"
		done | LC_ALL=C sort
	} | sha256sum | sed 's/^\([0-9a-f]*\).*/sha256:\1/'
}

records_count() { ls "$STATE/records" 2>/dev/null | grep -c '\.json$'; }

# The governed container, its record and the hook's bookkeeping, for one runtime.
governed() {
	local rt=$1 name="gov-$1" b sid="spiffe://test.kwitness.local/oci/gov-$1"
	b=$(make_bundle "$rt" "$name") || { not_ok "$rt: bundle"; return; }
	run_container "$rt" "$name" "$b"
	if [ $RC -eq 0 ] && grep -qx 'allowed=0' <<<"$OUT"; then
		ok "$rt: the allowed connection succeeded inside the container"
	else
		not_ok "$rt: the allowed connection (rc $RC)"
		sed 's/^/#   /' <<<"$OUT" | head -20
	fi
	if grep -q "can't connect to remote host.*Operation not permitted" <<<"$OUT" &&
		grep -qx 'denied=1' <<<"$OUT"; then
		ok "$rt: the denied connection failed with EPERM inside the container"
	else
		not_ok "$rt: the denied connection did not fail with EPERM"
		sed 's/^/#   /' <<<"$OUT" | head -20
	fi
	if ! find_record "$sid"; then
		not_ok "$rt: no record for $sid"
		return
	fi
	if verify_record; then
		ok "$rt: the record verifies with --log and --policy"
	else
		not_ok "$rt: the record does not verify"
		"$KW" verify --key "$KT_TMP/signer.jwk" --log "$LOG" --policy "$POL" "$REC" | sed 's/^/#   /'
	fi
	local deny allow
	deny=$(decisions "$LOG" | grep "\"port\":$LPORT_B" | head -1)
	allow=$(decisions "$LOG" | grep "\"port\":$LPORT_A" | head -1)
	if [ "$(jfield "$deny" decision)" = deny ] && [ "$(jfield "$deny" enforced)" = true ] &&
		[ "$(jfield "$allow" decision)" = permit ] && [ "$(jfield "$deny" comm)" = nc ]; then
		ok "$rt: the log holds the kernel's allow and its enforced deny, from nc"
	else
		not_ok "$rt: the log's decisions"
		sed 's/^/#   /' "$LOG" | head -10
	fi
	# the default image digest, re-derived by an independent walk of the rootfs
	expect_eq "$rt: the default image digest is the rootfs listing's digest" \
		"$(rootfs_listing_digest "$b/rootfs")" "$(head -1 "$LOG" | jq -r .image_digest)"
	expect_eq "$rt: poststop removed the hook's state (its records/ notes stay)" "" \
		"$(ls "$HOOKSTATE" 2>/dev/null | grep -vx records)"
	expect_eq "$rt: the record's path is written where the user finds it (records/<id>.json)" "$REC" \
		"$(jq -r .record_path "$HOOKSTATE/records/kwt$$-$name-$rt.json" 2>/dev/null)"
	expect_eq "$rt: no session is left open" "no open sessions" \
		"$("$KW" session list --socket "$KT_SOCK")"
}

# A missing policy file: the hook fails, the container never runs.
missing_policy() {
	local rt=$1 b n
	n=$(records_count)
	b=$(make_bundle "$rt" "nopol-$rt" '.annotations["io.kwitness.policy"] = "missing.json"') ||
		{ not_ok "$rt: bundle"; return; }
	run_container "$rt" "nopol-$rt" "$b"
	if [ $RC -ne 0 ] && ! grep -q 'allowed=' <<<"$OUT" &&
		grep -qF "kwitness oci-hook: kwt$$-nopol-$rt-$rt: annotation io.kwitness.policy: missing.json in $POLDIR: No such file or directory" <<<"$OUT"; then
		ok "$rt: a missing policy file stops the container, with the hook's reason"
	else
		not_ok "$rt: a missing policy file (rc $RC)"
		sed 's/^/#   /' <<<"$OUT" | head -10
	fi
	expect_eq "$rt: ... and no record was made" "$n" "$(records_count)"
	expect_eq "$rt: ... and the hook's first line is the real reason (no \"no open session\" before it)" \
		1 "$(grep -m1 'kwitness oci-hook' <<<"$OUT" | grep -c 'missing.json')"
}

# A FIFO where the policy should be: refused at once (a read would wait for
# a writer forever and hold the container's creation with it).
fifo_policy() {
	local rt=$1 b start
	[ -p "$POLDIR/fifo.json" ] || mkfifo "$POLDIR/fifo.json"
	b=$(make_bundle "$rt" "fifo-$rt" '.annotations["io.kwitness.policy"] = "fifo.json"') ||
		{ not_ok "$rt: bundle"; return; }
	start=$SECONDS
	run_container "$rt" "fifo-$rt" "$b"
	if [ $RC -ne 0 ] && [ $((SECONDS - start)) -lt 60 ] && ! grep -q 'allowed=' <<<"$OUT" &&
		grep -qF "annotation io.kwitness.policy: fifo.json in $POLDIR: not a regular file" <<<"$OUT"; then
		ok "$rt: a FIFO as the policy stops the container promptly, with the hook's reason"
	else
		not_ok "$rt: a FIFO as the policy (rc $RC, $((SECONDS - start)) s)"
		sed 's/^/#   /' <<<"$OUT" | head -10
	fi
}

# io.kwitness.on-error: allow: the same failure lets it run, unrecorded.
on_error_allow() {
	local rt=$1 b n
	n=$(records_count)
	b=$(make_bundle "$rt" "allow-$rt" '.annotations["io.kwitness.policy"] = "missing.json" |
		.annotations["io.kwitness.on-error"] = "allow"') || { not_ok "$rt: bundle"; return; }
	run_container "$rt" "allow-$rt" "$b"
	if [ $RC -eq 0 ] && grep -qx 'allowed=0' <<<"$OUT" && grep -qx 'denied=0' <<<"$OUT"; then
		ok "$rt: on-error allow: the container ran, ungoverned"
	else
		not_ok "$rt: on-error allow (rc $RC)"
		sed 's/^/#   /' <<<"$OUT" | head -10
	fi
	expect_eq "$rt: ... and unrecorded" "$n" "$(records_count)"
}

# No io.kwitness.policy: the hook is installed but does nothing.
not_kwitness() {
	local rt=$1 b n
	n=$(records_count)
	b=$(make_bundle "$rt" "plain-$rt" 'del(.annotations["io.kwitness.policy"])') ||
		{ not_ok "$rt: bundle"; return; }
	run_container "$rt" "plain-$rt" "$b"
	if [ $RC -eq 0 ] && grep -qx 'denied=0' <<<"$OUT" && [ "$n" = "$(records_count)" ]; then
		ok "$rt: without io.kwitness.policy the hook leaves the container alone"
	else
		not_ok "$rt: without io.kwitness.policy (rc $RC)"
		sed 's/^/#   /' <<<"$OUT" | head -10
	fi
}

# A bad annotation fails closed.
bad_annotation() {
	local rt=$1 b
	b=$(make_bundle "$rt" "badann-$rt" '.annotations["io.kwitness.sandbox"] = "typo"') ||
		{ not_ok "$rt: bundle"; return; }
	run_container "$rt" "badann-$rt" "$b"
	if [ $RC -ne 0 ] && ! grep -q 'allowed=' <<<"$OUT" &&
		grep -q "kwitness oci-hook: .*: unknown annotation io.kwitness.sandbox" <<<"$OUT"; then
		ok "$rt: an unknown io.kwitness annotation stops the container"
	else
		not_ok "$rt: an unknown io.kwitness annotation (rc $RC)"
		sed 's/^/#   /' <<<"$OUT" | head -10
	fi
}

# create fails after createRuntime opened the session (a later hook fails):
# the runtime tears the container down (runc runs poststop then, crun does
# not), and the session must not stay open: kwitnessd closes a session whose
# cgroup was removed 10 s before.
failed_create() {
	local rt=$1 b sid="spiffe://test.kwitness.local/oci/failcreate-$1" list
	b=$(make_bundle "$rt" "failcreate-$rt" '.hooks.createContainer = [{path: "/bin/false"}]') ||
		{ not_ok "$rt: bundle"; return; }
	run_container "$rt" "failcreate-$rt" "$b"
	if [ $RC -ne 0 ] && ! grep -q 'allowed=' <<<"$OUT"; then
		ok "$rt: a failing createContainer hook stops the container"
	else
		not_ok "$rt: a failing createContainer hook (rc $RC)"
		sed 's/^/#   /' <<<"$OUT" | head -10
	fi
	for _ in $(seq 200); do
		list=$("$KW" session list --socket "$KT_SOCK")
		[ "$list" = "no open sessions" ] && break
		sleep 0.1
	done
	expect_eq "$rt: ... and no session is left open" "no open sessions" "$list"
	if find_record "$sid" && verify_record; then
		ok "$rt: ... and its record is signed and verifies"
	else
		not_ok "$rt: ... no verified record for the failed container"
	fi
}

# The container in a cgroup another process is in: the hook tags a child of
# its own, never the shared cgroup; the other process stays ungoverned. The
# hooks here take their stage from the state, as in examples/oci/kwitness.json.
shared_cgroup() {
	local rt=$1 b shared rel sid="spiffe://test.kwitness.local/oci/shared-$1" other
	shared=$(cg_make "shared-$rt")
	rel=${shared#"$(dirname "$KT_CG")"}
	cg_run "$shared" sleep 300 &
	other=$!
	b=$(STAGE_ARG=false make_bundle "$rt" "shared-$rt" ".linux.cgroupsPath = \"$rel\" |
		.annotations[\"io.kwitness.sandbox-id\"] = \"$sid\"") || { not_ok "$rt: bundle"; return; }
	run_container "$rt" "shared-$rt" "$b"
	kill "$other" 2>/dev/null
	wait "$other" 2>/dev/null
	if ! grep -qx 'denied=1' <<<"$OUT" || ! find_record "$sid"; then
		not_ok "$rt: shared cgroup: the container was not governed (rc $RC)"
		sed 's/^/#   /' <<<"$OUT" | head -10
		return
	fi
	local want
	want=$(head -1 "$LOG")
	if grep -q "\"cgroup\":\"$shared/kwitness-kwt$$-shared-$rt-$rt\"" <<<"$want"; then
		ok "$rt: shared cgroup: the session is on the hook's dedicated child cgroup"
	else
		not_ok "$rt: shared cgroup: the session's cgroup"
		echo "#   $want"
	fi
	[ ! -d "$shared/kwitness-kwt$$-shared-$rt-$rt" ]
	check "$rt: shared cgroup: poststop removed the dedicated cgroup" test $? -eq 0
}

for rt in runc crun; do
	if ! command -v "$rt" >/dev/null; then
		skip "$rt is not installed (scripts/deps.sh installs it)"
		continue
	fi
	if [ "$rt" = crun ]; then
		# crun refuses a hybrid host whose cgroup2 mount carries a controller
		# ("cgroups in hybrid mode not supported, drop all controllers from
		# cgroupv2"); mounting that controller's v1 hierarchy moves it off.
		mnt2=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
		if [ "$mnt2" != /sys/fs/cgroup ]; then
			for c in $(cat "$mnt2/cgroup.controllers"); do
				mkdir -p "$KT_TMP/v1-$c"
				mount -t cgroup -o "$c" "kwitness-test-$c" "$KT_TMP/v1-$c" &&
					V1_MOUNTS+=("$KT_TMP/v1-$c")
				echo "# crun: mounted the v1 $c hierarchy so crun accepts this hybrid host"
			done
		fi
	fi
	governed "$rt"
	missing_policy "$rt"
	fifo_policy "$rt"
	on_error_allow "$rt"
	not_kwitness "$rt"
	bad_annotation "$rt"
	shared_cgroup "$rt"
	failed_create "$rt"
done
finish
