#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Processes already in a session's cgroup when it opens get "open" proc
# entries (docs/decision-log.md, "proc"): a shell and its child, placed in
# the cgroup before the open, each appear once, the child with the shell's
# reference as its parent; the child's argv, longer than the 1024-byte
# bound, is cut, and its argv_sha256 is the SHA-256 the test computes
# itself from the argument vector it gave (NUL-separated).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kwd_lib.sh"

kwd_require
command -v python3 >/dev/null || kt_skip_all "python3 is needed to read the log"
kwd_start

cg=$(cg_make lopen)
PRE=$KT_TMP/pre
LONG=$(head -c 1500 /dev/zero | tr '\0' y)
# the child's argument vector, as the parent's shell gives it to execve
CHILD_SCRIPT='echo $$ >"$0.child"; sleep 60; true'
(cg_run "$cg" sh -c 'echo $$ >"$0.parent"; sh -c "$2" "$0" "$1" & wait' "$PRE" "$LONG" "$CHILD_SCRIPT" &)
for _ in $(seq 100); do [ -s "$PRE.child" ] && break; sleep 0.1; done
P=$(cat "$PRE.parent") C=$(cat "$PRE.child")
check "the shell and its child run in the cgroup before the open" \
	grep -qx "$C" "$cg/cgroup.procs"

POL=$(policy_file lopen '{"kwitness_policy":1,"mode":"enforce","record":"all","net":{"connect":["127.0.0.1/32:1"]}}')
sid=$(session_open "$cg" "$POL")
[ -n "$sid" ] || { not_ok "session opens"; finish; }
# a decision of the child's child (sleep is there too): the session works
session_close "$sid" >"$KT_TMP/close.out" || { not_ok "session closes"; cat "$KT_TMP/close.out"; }
echo 1 >"$cg/cgroup.kill" 2>/dev/null || kill "$C" "$P" 2>/dev/null
check "the record verifies (open entries numbered in the transcript)" verify_record

# "pid event parent-pid parent==ref-of-parent argv_truncated argv_sha256 exe" per open entry
python3 - "$LOG" "$P" "$C" >"$KT_TMP/open.out" <<'EOF2'
import json, sys
log, p, c = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
entries = [json.loads(l) for l in open(log)]
opens = {e["pid"]: e for e in entries if e.get("tool") == "proc" and e.get("event") == "open"}
print("pids", " ".join(str(x) for x in sorted(k for k in opens if k in (p, c))))
print("counts", sum(1 for e in entries if e.get("tool") == "proc" and e.get("pid") in (p, c)))
if p in opens and c in opens:
    print("parent", opens[c].get("parent") == opens[p]["proc"], opens[c].get("ppid") == p)
    print("cut", opens[c].get("argv_truncated"), opens[c].get("argv_len"), len(opens[c].get("argv", "").encode()))
    print("sha", opens[c].get("argv_sha256"))
    print("exe", opens[c].get("exe"))
EOF2
sed 's/^/# /' "$KT_TMP/open.out"
expect_eq "the shell and its child have open entries" "pids $(printf '%s\n' "$P" "$C" | sort -n | paste -sd' ')" \
	"$(grep '^pids' "$KT_TMP/open.out")"
expect_eq "one proc entry each" "counts 2" "$(grep '^counts' "$KT_TMP/open.out")"
expect_eq "the child's parent is the shell's reference (and pid)" "parent True True" \
	"$(grep '^parent' "$KT_TMP/open.out")"
# the vector: sh -c SCRIPT PRE LONG; argv_len counts the last argument's NUL
want_len=$(python3 -c 'import sys; print(sum(len(a.encode()) + 1 for a in sys.argv[1:]))' \
	sh -c "$CHILD_SCRIPT" "$PRE" "$LONG")
expect_eq "its argv is cut at 1024 bytes, argv_len the whole" "cut True $want_len 1024" \
	"$(grep '^cut' "$KT_TMP/open.out")"
want_sha=sha256:$( { printf '%s\0' sh -c "$CHILD_SCRIPT" "$PRE"; printf '%s' "$LONG"; } | sha256sum | cut -d' ' -f1)
expect_eq "argv_sha256 is sha256sum of the arguments joined by NUL" "sha $want_sha" \
	"$(grep '^sha' "$KT_TMP/open.out")"
expect_eq "its exe is /proc's: the shell's file" "exe $(readlink -f "$(command -v sh)")" \
	"$(grep '^exe' "$KT_TMP/open.out")"
"$KW" log tree "$LOG" >"$KT_TMP/tree.out"
check "kwitness log tree indents the child below the shell" grep -Eq "^  $C " "$KT_TMP/tree.out"
check "kwitnessd is still running" kwd_alive
finish
