#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Per-session quota on the shared cgroup table: a session adds at most
# KW_SESSION_MAX_CGROUPS (1024) descendants to kw_cgroups. One past that is not
# tracked, and that is never silent: a cgroup.untracked entry names it, the
# trailer counts it and says complete: false, and the record still verifies.
# A removed descendant gives its place back.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kwd_lib.sh"

QUOTA=1024
kwd_require
kwd_start
kwd_has_hook net.connect || kt_skip_all "net.connect hooks unavailable on this kernel"

if ! policy_session quota enforce deny '"net":{"connect":["127.0.0.1/32:1"]}'; then
	not_ok "session opens"
	finish
fi
for i in $(seq $QUOTA); do mkdir "$cg/c$i" || break; done
expect_eq "$QUOTA descendants made" "$QUOTA" "$(find "$cg" -mindepth 1 -maxdepth 1 -type d | wc -l)"
mkdir "$cg/over1" "$cg/over2"
# A removed descendant frees its place: the next one is tracked again.
rmdir "$cg/c1"
mkdir "$cg/again"
"$KW" session close --socket "$KT_SOCK" "$sid" >"$KT_TMP/close.out"
LOG=$(sed -n 's/^log: *//p' "$KT_TMP/close.out")
REC=$(sed -n 's/^record: *//p' "$KT_TMP/close.out")
POL=$(sed -n 's/^policy: *//p' "$KT_TMP/close.out")

untracked=$(grep '"tool":"cgroup.untracked"' "$LOG")
expect_eq "two cgroup.untracked entries (the two past the quota)" 2 "$(grep -c . <<<"$untracked")"
expect_eq "they name the two cgroups past the quota" \
	"$(stat -c %i "$cg/over1") $(stat -c %i "$cg/over2")" \
	"$(sed -n 's/.*"child_cgroup":"\([0-9]*\)".*/\1/p' <<<"$untracked" | sort -n | tr '\n' ' ' | sed 's/ $//')"
line=$(head -1 <<<"$untracked")
bad=$(entry_mismatch "$line" "rule=cgroups.session_quota;decision=deny;enforced=false")
[ "$(jfield "$line" cgroup)" = "$(stat -c %i "$cg")" ] || bad="$bad cgroup (want the parent's id)"
[ -z "$bad" ] && ok "the entry says why, and under which cgroup" || { not_ok "the entry:$bad"; echo "#   $line"; }
check "the cgroup made after a removal was tracked (no entry for it)" \
	bash -c "! grep -q '\"child_cgroup\":\"$(stat -c %i "$cg/again")\"' '$LOG'"
t=$(trailer "$LOG")
expect_eq "the trailer counts them: untracked_cgroups 2" 2 "$(jfield "$t" untracked_cgroups)"
expect_eq "the trailer says complete: false" false "$(jfield "$t" complete)"
check "kwitness session close says INCOMPLETE" grep -q "INCOMPLETE" "$KT_TMP/close.out"
check "the record verifies as incomplete (log_incomplete; with --allow-incomplete a warning)" verify_incomplete
check "kwitnessd is still running" kwd_alive
finish
