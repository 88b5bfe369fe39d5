#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kwitness prune --older-than DUR (issue 38): a closed session older than
# DUR goes whole (record, log, the log's checkpoints, tlog-proof, its TPM
# commitment commit/<session>.json) and every
# file removed is listed; shared TPM evidence and bundles go only when no
# session left names them; an open session, a spooled record and a log
# without a record are kept and said; --dry-run removes nothing; a session
# whose files cannot all be moved stays whole.
. "$(dirname "$0")/../lib.sh"

T=$(mktemp -d /tmp/kwitness-prune.XXXXXX)
trap 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
S=$T/state
mkdir -p "$S/records" "$S/logs" "$S/policies" "$S/evidence" "$S/sessions" "$S/spool" "$S/commit"
hex() { printf '%s' "$1" | sha256sum | cut -c1-64; }
E_SHARED=$(hex shared) E_OLD=$(hex old) B_SHARED=$(hex bshared) B_OLD=$(hex bold)
# session ID AGE_DAYS EVIDENCE BUNDLE: a record and a log naming them
session() {
	printf '{"tool":"kwitness.open","evidence":"sha256:%s"}\n{"tool":"net.connect"}\n' "$3" >"$S/logs/$1.jsonl"
	printf '{"policy":{"bundle_hash":"sha256:%s"}}\n' "$4" >"$S/records/$1.json"
	touch -d "-$2 days" "$S/records/$1.json"
}
session old1 40 "$E_OLD" "$B_OLD"
session old2 40 "$E_SHARED" "$B_SHARED"
session new1 1 "$E_SHARED" "$B_SHARED"
session open1 40 "$E_SHARED" "$B_SHARED"
session spooled1 40 "$E_SHARED" "$B_SHARED"
echo '{}' >"$S/sessions/open1.json"
: >"$S/spool/spooled1"
echo proof >"$S/records/old1.json.tlog-proof"
echo cp >"$S/logs/old1.jsonl.checkpoints"
for c in old1 new1; do echo '{}' >"$S/commit/$c.json"; done
echo '{"tool":"kwitness.open","evidence":"sha256:'"$E_OLD"'"}' >"$S/logs/norecord.jsonl"
for e in "$E_SHARED" "$E_OLD"; do echo '{}' >"$S/evidence/$e.json"; done
for b in "$B_SHARED" "$B_OLD"; do echo '{}' >"$S/policies/$b"; done
find "$S" -type f | sort >"$T/before"

out=$("$KW" prune --older-than 30d --state-dir "$S" --dry-run); rc=$?
expect_eq "--dry-run: exit 0, nothing removed" "0 $(cat "$T/before")" "$rc $(find "$S" -type f | sort)"
check "--dry-run lists old1's record" grep -qx "would remove $S/records/old1.json" <<<"$out"
check "--dry-run lists old1's TPM commitment" grep -qx "would remove $S/commit/old1.json" <<<"$out"

out=$("$KW" prune --older-than 30d --state-dir "$S"); rc=$?
expect_eq "prune: exit 0" 0 "$rc"
gone=$(comm -23 "$T/before" <(find "$S" -type f | sort) | paste -sd' ')
expect_eq "old sessions go whole, with evidence and bundle only old1 named" \
	"$S/commit/old1.json $S/logs/old1.jsonl $S/logs/old1.jsonl.checkpoints $S/logs/old2.jsonl $S/policies/$B_OLD $S/records/old1.json $S/records/old1.json.tlog-proof $S/records/old2.json" \
	"$gone"
expect_eq "every file removed is listed" "$(tr ' ' '\n' <<<"$gone" | sed 's/^/removed /' | sort)" \
	"$(grep '^removed ' <<<"$out" | sort)"
check "evidence a log without record names is kept ($E_OLD)" test -e "$S/evidence/$E_OLD.json"
check "the bundle only old1 named is removed" test ! -e "$S/policies/$B_OLD"
check "shared evidence stays (new1 names it)" test -e "$S/evidence/$E_SHARED.json"
check "a kept session's TPM commitment stays" test -e "$S/commit/new1.json"
check "an open session is kept and said" grep -q "^kept open1: the session is still open" <<<"$out"
check "a spooled record is kept and said" grep -q "^kept spooled1: spooled for kwitness estate push" <<<"$out"
check "a log without record is kept and said" grep -q "^kept $S/logs/norecord.jsonl: no record" <<<"$out"
expect_eq "the summary" "summary: 2 session(s) removed, 3 kept, 0 could not be removed" "$(tail -1 <<<"$out")"

# a session whose files cannot all be moved stays whole
if [ "$(id -u)" != 0 ]; then
	session old3 40 "$E_SHARED" "$B_SHARED"
	chmod a-w "$S/logs"
	"$KW" prune --older-than 30d --state-dir "$S" >/dev/null 2>&1
	expect_eq "files that cannot move: exit 1, the session whole" "1 2" \
		"$? $(ls "$S/records/old3.json" "$S/logs/old3.jsonl" | wc -l)"
	chmod u+w "$S/logs"
elif command -v setpriv >/dev/null; then
	session old3 40 "$E_SHARED" "$B_SHARED"
	chown -R 65534:65534 "$S" && chmod 0755 "$T"
	chown 0:0 "$S/logs"
	out=$(setpriv --reuid 65534 --regid 65534 --clear-groups "$KW" prune --older-than 30d --state-dir "$S" 2>&1); rc=$?
	expect_eq "a log that cannot move: exit 1, the session kept whole" "1 2" \
		"$rc $(ls "$S/records/old3.json" "$S/logs/old3.jsonl" 2>/dev/null | wc -l)"
	check "... and it says so" grep -q "old3: Permission denied; kept whole" <<<"$out"
	chown -R 0:0 "$S"
else
	skip "needs setpriv (as root) to make a file that cannot move"
fi
"$KW" prune --state-dir "$S" >/dev/null 2>&1
expect_eq "without --older-than: a usage error (2)" 2 "$?"
"$KW" prune --older-than 3x --state-dir "$S" >/dev/null 2>&1
expect_eq "--older-than 3x: a usage error (2)" 2 "$?"
finish
