#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Process lineage (docs/decision-log.md, "proc"): a session runs a nested
# tree of shells and kw-netprobe connects; every process writes its own pid
# and parent pid to a file. The log's proc entries must rebuild exactly that
# tree, each connect's "proc" must name the entry of the process that made
# it, and a pid used twice in the session (forced with ns_last_pid) must
# stay two processes. kwitness log tree must agree with the entries.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kwd_lib.sh"

kwd_require
command -v python3 >/dev/null || kt_skip_all "python3 is needed to read the log"
kwd_start
kwd_has_hook net.connect || kt_skip_all "net.connect hooks unavailable on this kernel"

if ! policy_session lineage enforce deny '"net":{"connect":["127.0.0.1/32:1"]}'; then
	not_ok "session opens"
	finish
fi
TREE=$KT_TMP/tree
: >"$TREE"
# Every process notes "pid ppid" itself, then becomes what it names (exec
# keeps the pid): the root shell, a background child, a foreground child,
# and a grandchild two shells down; three of them end as kw-netprobe.
cg_run "$cg" sh -c '
	T=$0; NP=$1
	echo "$$ $PPID" >>"$T"
	sh -c "echo \$\$ \$PPID >>$T; exec $NP connect 127.0.0.1 1" &
	sh -c "echo \$\$ \$PPID >>$T; exec $NP connect 127.0.0.1 2"
	sh -c "echo \$\$ \$PPID >>$T; sh -c \"echo \\\$\\\$ \\\$PPID >>$T; exec $NP connect 127.0.0.1 3\"; true"
	wait' "$TREE" "$NP" >/dev/null

# pid reuse: run kw-netprobe until one gets a pid a session process had
# before, with /proc/sys/kernel/ns_last_pid pointing just below it (other
# processes of the host may take it first: try again). The pid is noted.
REUSE=$KT_TMP/reuse
cg_run "$cg" sh -c '
	NP=$0; R=$1
	sh -c "echo \$\$ >$R.first; exec $NP connect 127.0.0.1 4" >/dev/null
	p=$(cat $R.first)
	for i in $(seq 200); do
		echo $((p - 1)) >/proc/sys/kernel/ns_last_pid 2>/dev/null || break
		sh -c "echo \$\$ >$R.again; exec $NP connect 127.0.0.1 5" >/dev/null
		[ "$(cat $R.again)" = "$p" ] && { echo "$p" >"$R"; break; }
	done' "$NP" "$REUSE"

session_close "$sid" >"$KT_TMP/close.out" || { not_ok "session closes"; cat "$KT_TMP/close.out"; finish; }
check "the record verifies (proc entries in the transcript)" verify_record

# The log's view, one line per process: "pid ppid" from the entries whose
# parent has an entry too (the root's parent is the test's shell).
read_log() {
	python3 - "$LOG" "$1" <<'EOF'
import json, sys
log, what = sys.argv[1], sys.argv[2]
procs, order, decisions = {}, [], []
for line in open(log):
    e = json.loads(line)
    if e.get("tool") == "proc":
        p = procs.setdefault(e["proc"], {"pid": e["pid"], "events": []})
        if e["proc"] not in order:
            order.append(e["proc"])
        p.setdefault("parent", e.get("parent"))
        p["events"].append(e["event"])
        if e["event"] == "exec":
            p["exe"] = e.get("exe")
    elif "proc" in e and not e["tool"].startswith("kwitness."):
        decisions.append(e)
if what == "edges":
    for r in order:
        par = procs[r].get("parent")
        print(procs[r]["pid"], procs[par]["pid"] if par in procs else "root")
elif what == "decisions":
    # each connect: its port, its pid, the pid and exe of the entry it names
    for d in decisions:
        if d["tool"] == "net.connect":
            p = procs.get(d["proc"], {})
            print(d["port"], d["pid"], p.get("pid"), p.get("exe"))
elif what == "refs":
    for r in order:
        print(r, procs[r]["pid"], ",".join(procs[r]["events"]))
elif what == "counts":
    n = {}
    for d in decisions:
        n[d["proc"]] = n.get(d["proc"], 0) + 1
    for r in sorted(procs):
        print(r, n.get(r, 0))
EOF
}

# the tree the processes wrote, as "pid ppid" (the root: ppid "root")
root=$(head -1 "$TREE" | cut -d' ' -f1)
want=$(awk -v r="$root" '{ print $1, ($1 == r ? "root" : $2) }' "$TREE" | sort)
got=$(read_log edges | awk 'NR == FNR { w[$1] = 1; next } ($1 in w)' "$TREE" - | sort)
if [ "$want" = "$got" ]; then
	ok "the proc entries rebuild the tree the processes wrote (5 processes)"
else
	not_ok "the proc entries rebuild the tree"
	echo "# want:"; sed 's/^/#   /' <<<"$want"; echo "# got:"; sed 's/^/#   /' <<<"$got"
fi
expect_eq "the tree file has 5 processes" 5 "$(wc -l <"$TREE")"

bad=$(read_log decisions | awk -v np="$NP" '$2 != $3 || $4 != np')
n=$(read_log decisions | wc -l)
if [ -z "$bad" ] && [ "$n" -ge 5 ]; then
	ok "each connect's proc names the entry of its own process, an exec of kw-netprobe ($n connects)"
else
	not_ok "connects and their proc entries ($n connects)"; sed 's/^/#   /' <<<"$bad"
fi

if [ -s "$REUSE" ]; then
	p=$(cat "$REUSE")
	refs=$(read_log refs | awk -v p="$p" '$2 == p { print $1 }' | sort -u | wc -l)
	expect_eq "pid $p used twice in the session: two processes, two proc references" 2 "$refs"
	ports=$(read_log decisions | awk -v p="$p" '$2 == p { print $1 }' | sort | tr '\n' ' ')
	conn_refs=$(python3 -c '
import json, sys
print(len({e["proc"] for e in map(json.loads, open(sys.argv[1])) if e.get("tool") == "net.connect" and e["pid"] == int(sys.argv[2])}))' "$LOG" "$p")
	expect_eq "its connects (ports $ports) name two different processes" 2 "$conn_refs"
else
	skip "pid reuse: no pid came back within 200 tries (a busy host)"
fi

# kwitness log tree: the same processes, the same counts
"$KW" log tree "$LOG" >"$KT_TMP/tree.out"
tree_counts=$(sed -n 's/.* decisions=\([0-9]*\) proc=\([0-9-]*\).*/\2 \1/p' "$KT_TMP/tree.out" | sort)
expect_eq "kwitness log tree lists every process with its decision count" \
	"$(read_log counts | sort)" "$tree_counts"
kid=$(awk -v r="$root" '$2 == r { print $1; exit }' "$TREE")
check "kwitness log tree indents the root's child below it" \
	grep -Eq "^  $kid " "$KT_TMP/tree.out"
# the report (kwitness report; estate report writes the same page) shows
# the same tree: in its text, and in its HTML page
"$KW" report --key "$KT_TMP/signer.jwk" --log "$LOG" --policy "$POL" "$REC" >"$KT_TMP/report.txt"
expect_eq "the report's process tree is kwitness log tree's" "$(cat "$KT_TMP/tree.out")" \
	"$(sed -n '/^process tree (proc entries):$/,$p' "$KT_TMP/report.txt" | tail -n +2)"
"$KW" report --key "$KT_TMP/signer.jwk" --log "$LOG" --policy "$POL" --html "$KT_TMP/report.html" \
	"$REC" >/dev/null
expect_eq "the HTML report's process tree lists the same processes and counts" "$tree_counts" \
	"$(sed -n '/<pre id="proctree">/,/<\/pre>/p' "$KT_TMP/report.html" |
		sed -n 's/.* decisions=\([0-9]*\) proc=\([0-9-]*\).*/\2 \1/p' | sort)"
check "kwitnessd is still running" kwd_alive
finish
