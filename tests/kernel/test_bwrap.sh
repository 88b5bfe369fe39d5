#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The bubblewrap recipe: `kwitness run -- bwrap --unshare-all --die-with-parent
# ... CMD`. The whole bwrap tree runs in the run's cgroup, so every process in
# it is governed and recorded: inside new user, pid, network, ipc, uts and
# cgroup namespaces, a connect to the allowed port is permitted (nothing
# listens in bwrap's own network namespace: ECONNREFUSED) and one to a denied
# port gets EPERM. The log holds the host's view: host pids (not the pids the
# sandbox sees) and the run cgroup's id (the sandbox sees its cgroup as "/").
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/kwd_lib.sh"

kwd_require
BWRAP=$(command -v bwrap) || { skip "bwrap is not installed (scripts/deps.sh installs bubblewrap)"; finish; }
kwd_start
# Ports inside bwrap's own network namespace: nothing else can hold them there.
BPORT_A=5001 BPORT_B=5002
POLICY=$(policy_file bwrap "{\"kwitness_policy\":1,\"mode\":\"enforce\",\"record\":\"all\",\"on_record_failure\":\"deny\",\"net\":{\"connect\":[\"127.0.0.1/32:$BPORT_A\"]}}")

# The recipe as the README gives it, with the build folder visible inside.
# /lib, /lib64 and /bin are symbolic links into /usr on a merged-/usr system
# (the README's case) and folders in the test VM: either is carried as it is.
ROOTDIRS=()
for d in lib lib64 bin; do
	if [ -L "/$d" ]; then
		ROOTDIRS+=(--symlink "$(readlink "/$d")" "/$d")
	elif [ -d "/$d" ]; then
		ROOTDIRS+=(--ro-bind "/$d" "/$d")
	fi
done
out=$("$KW" run --socket "$KT_SOCK" --policy "$POLICY" \
	--sandbox-id "spiffe://test.kwitness.local/bwrap/$$" -- \
	"$BWRAP" --unshare-all --die-with-parent --ro-bind /usr /usr "${ROOTDIRS[@]}" \
	--proc /proc --dev /dev \
	--ro-bind "$KW_BUILD" "$KW_BUILD" \
	sh -c "echo nspid=\$\$; grep '^0::' /proc/self/cgroup; $NP connect 127.0.0.1 $BPORT_A; $NP connect 127.0.0.1 $BPORT_B; exit 7" \
	2>"$KT_TMP/run.err")
rc=$?
expect_eq "kwitness run returns the sandboxed command's status through bwrap" 7 "$rc"
[ "$rc" -eq 7 ] || { sed 's/^/#   /' "$KT_TMP/run.err" | head -10; sed 's/^/#   /' <<<"$out" | head -5; }
inside=$(grep -E '^(ECONNREFUSED|EPERM|ok)' <<<"$out" | xargs)
expect_eq "inside bwrap: the allowed port is permitted (ECONNREFUSED: bwrap's own netns), the denied one EPERM" \
	"ECONNREFUSED EPERM" "$inside"
expect_eq "inside bwrap: the cgroup namespace shows its cgroup as the root" "0::/" "$(grep '^0::' <<<"$out")"

REC=$(sed -n 's/^record: *//p' "$KT_TMP/run.err")
LOG=$(sed -n 's/^log: *//p' "$KT_TMP/run.err")
POL=$(sed -n 's/^policy: *//p' "$KT_TMP/run.err")
if [ -f "$REC" ] && verify_record; then
	ok "the record verifies with --log and --policy"
else
	not_ok "the record does not verify"
	sed 's/^/#   /' "$KT_TMP/run.err"
fi
permit=$(decisions "$LOG" | grep "\"port\":$BPORT_A")
deny=$(decisions "$LOG" | grep "\"port\":$BPORT_B")
bad=$(entry_mismatch "$permit" "tool=net.connect;decision=permit;comm=kw-netprobe")$(entry_mismatch "$deny" "tool=net.connect;decision=deny;enforced=true;comm=kw-netprobe")
expect_eq "logged: the permit and the enforced deny, both from kw-netprobe inside bwrap" "" "$bad"
open=$(head -1 "$LOG")
expect_eq "logged: the decisions name the run's cgroup by its host id" \
	"$(jfield "$open" cgroup_id) $(jfield "$open" cgroup_id)" "$(jfield "$permit" cgroup) $(jfield "$deny" cgroup)"
mnt=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
cgpath=$(jfield "$open" cgroup)
check "logged: the open entry has the host's cgroup path ($cgpath), not bwrap's \"/\"" \
	test "${cgpath#"$mnt"/}" != "$cgpath" -a -n "${cgpath#"$mnt"/}"
nspid=$(sed -n 's/^nspid=//p' <<<"$out")
ppid=$(jfield "$permit" pid)
if [ -n "$nspid" ] && [ -n "$ppid" ] && [ "$ppid" -ne "$nspid" ] && [ "$ppid" -gt "$nspid" ]; then
	ok "logged: host pids ($ppid), not bwrap's pid namespace numbers (the shell inside was $nspid)"
else
	not_ok "logged pid $ppid vs the sandbox's own $nspid"
fi
expect_eq "the trailer: complete, 2 decisions, 1 denial" "true 2 1" \
	"$(t=$(trailer "$LOG"); echo "$(jfield "$t" complete) $(jfield "$t" decisions) $(jfield "$t" denials)")"
finish
