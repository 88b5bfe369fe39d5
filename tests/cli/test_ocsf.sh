#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kwitness log export --format ocsf: a log with a decision of every tool
# (permit, enforced deny, advisory deny) becomes OCSF events that the schema
# copy in tests/vectors/ocsf accepts (tests/helpers/ocsf_check.py: required
# attributes, types, enums, of classes 4001, 4003, 1001, 1007 and 1003), each
# naming its session, its seq, the entry's bytes and their SHA-256, and the
# record's hash when the record is given.
source "$(dirname "$0")/../lib.sh"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
CHECK=$KW_ROOT/tests/helpers/ocsf_check.py
SCHEMA=$VECTORS/ocsf

if [ ! -x "$KW" ]; then
	not_ok "kwitness binary missing at $KW"
	finish
fi
command -v python3 >/dev/null || { skip "python3 missing"; finish; }

SID=0123456789abcdef0123456789abcdef
# one decision per tool, in each of three outcomes, canonical (ASCII, sorted)
python3 - "$SID" >"$T/log.jsonl" <<'PY'
import json, sys
sid = sys.argv[1]
def line(o): print(json.dumps(o, sort_keys=True, separators=(",", ":")))
line({"tool": "kwitness.open", "session": sid, "ts": 1795952651050116, "hostname": "h1",
      "machine_id": "3d1219c7aaaaaaaaaaaaaaaaaaaaaaaa", "collector": "kwitnessd"})
common = {"cgroup": "23471", "comm": "probe", "pid": 31533, "uid": 1000}
objects = {
    "net.connect": {"host": "127.0.0.1", "port": 80, "proto": "tcp"},
    "net.send": {"host": "::1", "port": 53, "proto": "udp", "via": "a.test", "via_seq": 1},
    "net.bind": {"host": "0.0.0.0", "port": 8080, "proto": "tcp"},
    "net.socket": {"family": "inet6", "type": "dgram", "protocol": 17},
    "net.unix": {"path": "/run/x.sock", "access": "connect"},
    "dev.access": {"dev": "c 1:5", "access": "r"},
    "sysctl.write": {"name": "kernel/hostname"},
    "fs.exec": {"path": "/usr/bin/env", "digest": "sha256:" + "ab" * 32, "dev": "8:1",
                "ino": "1234", "generation": 7},
    "proc.kill": {"target_pid": 42, "target_cgroup": "23471", "signal": 9},
    "proc.sigio": {"target_pid": 43, "target_cgroup": "1", "signal": 29},
    "proc.ptrace": {"target_pid": 44, "target_cgroup": "1", "mode": 2},
    "cgroup.move": {"target_pid": 45, "target_cgroup": "99", "via": "cgroup.procs"},
    "bpf": {"cmd": 5},
}
for t in ["fs.open", "fs.mkdir", "fs.rmdir", "fs.unlink", "fs.rename", "fs.link", "fs.symlink",
          "fs.mknod", "fs.truncate", "fs.chmod", "fs.chown", "fs.utimes", "fs.setxattr",
          "fs.removexattr", "fs.chattr", "fs.mount", "fs.move_mount", "fs.umount",
          "fs.pivot_root", "fs.fsconfig"]:
    objects[t] = {"path": "/tmp/f", "access": "w"}
seq = 0
for tool, obj in objects.items():
    for decision, enforced in (("permit", False), ("deny", True), ("deny", False)):
        e = dict(common, **obj, tool=tool, decision=decision, enforced=enforced,
                 rule=tool + "[0]", seq=seq, ts=1795952651082681 + seq)
        line(e)
        seq += 1
for decision, enforced, rcode in (("permit", False, "NOERROR"), ("deny", True, "REFUSED")):
    line({"client": "127.0.0.1:48123", "decision": decision, "enforced": enforced,
          "name": "a.test", "proto": "udp", "qtype": "A", "rcode": rcode, "rule": "net.dns:default",
          "seq": seq, "source": "collector", "tool": "dns.query", "ts": 1795952651090000 + seq})
    seq += 1
line({"complete": True, "decisions": seq, "denials": 0, "dropped": 0, "next_seq": seq,
      "session": sid, "tool": "kwitness.close", "ts": 1795952651099999})
PY
decisions=$(($(wc -l <"$T/log.jsonl") - 2))

"$KW" log export --format ocsf "$T/log.jsonl" >"$T/ocsf.jsonl"
expect_eq "log export: exit 0" 0 "$?"
expect_eq "log export: one event per decision (not the open or close entry)" \
	"$decisions" "$(wc -l <"$T/ocsf.jsonl")"
out=$(python3 "$CHECK" "$SCHEMA" "$T/ocsf.jsonl" --classes 4001,4003,1001,1007,1003)
rc=$?
echo "$out" | sed 's/^/# /' | tail -20
expect_eq "every event valid against the OCSF schema copy (all five classes)" 0 "$rc"

# The checker is not lenient: each of these breaks is found.
first=$(head -1 "$T/ocsf.jsonl")
n=0
for jqexpr in '.activity_id = 42' '.dst_endpoint.port = "80"' '.dst_endpoint.ip = "not-an-ip"' \
	'del(.metadata.product)' '.severity_id = 7' '.bogus = 1' '.type_uid = 1' \
	'.metadata.profiles = ["security_control"]' '.dst_endpoint = {}' '.time = "now"'; do
	jq -c "$jqexpr" <<<"$first" >"$T/broken.jsonl"
	if python3 "$CHECK" "$SCHEMA" "$T/broken.jsonl" >/dev/null; then
		echo "# the checker accepted: $jqexpr"
	else
		n=$((n + 1))
	fi
done
expect_eq "the checker refuses each of 10 broken events" 10 "$n"

# Each event points back to its entry: session, seq, the bytes and their
# SHA-256 (computed here, by Python's hashlib).
python3 - "$T/log.jsonl" "$T/ocsf.jsonl" "$SID" >"$T/links" <<'PY'
import hashlib, json, sys
lines = [l.rstrip("\n") for l in open(sys.argv[1])][1:-1]
events = [json.loads(l) for l in open(sys.argv[2])]
bad = 0
for l, ev in zip(lines, events):
    e = json.loads(l)
    h = hashlib.sha256(l.encode()).hexdigest()
    md = ev["metadata"]
    tags = {t["name"]: t["value"] for t in md.get("tags", [])}
    ok = (ev["raw_data"] == l and ev["raw_data_hash"]["value"] == h
          and ev["raw_data_hash"]["algorithm_id"] == 3 and md["sequence"] == e["seq"]
          and md["correlation_uid"] == sys.argv[3] and tags.get("kwitness.entry_hash") == "sha256:" + h
          and tags.get("kwitness.session") == sys.argv[3]
          and ev["action_id"] == (2 if e["decision"] == "deny" and e["enforced"] else 1))
    bad += not ok
print(len(events), bad)
PY
expect_eq "each event: raw_data is the entry, raw_data_hash its SHA-256, its seq and session" \
	"$decisions 0" "$(cat "$T/links")"
expect_eq "without a record: no record hash" 0 "$(grep -c kwitness.record_hash "$T/ocsf.jsonl")"

# with the record: its hash (of its RFC 8785 bytes) in every event
REC=$VECTORS/trace-spec/examples/$(ls "$VECTORS/trace-spec/examples" | grep -m1 '\.json$')
want="sha256:$("$KW" jcs "$REC" | sha256sum | cut -d' ' -f1)"
"$KW" log export --format ocsf --record "$REC" "$T/log.jsonl" >"$T/ocsf2.jsonl"
expect_eq "with --record: every event carries the record's hash" "$decisions" \
	"$(jq -r '.metadata.tags[] | select(.name == "kwitness.record_hash") | .value' "$T/ocsf2.jsonl" | grep -cx "$want")"

# a line that is not JSON is refused, with its number
printf '{"tool":"kwitness.open"}\nnot json\n' >"$T/bad.jsonl"
"$KW" log export --format ocsf "$T/bad.jsonl" >/dev/null 2>"$T/err"
expect_eq "a line that is not JSON: exit 1" 1 "$?"
check "... says which line" grep -q 'line 2' "$T/err"
"$KW" log export --format xml "$T/log.jsonl" >/dev/null 2>&1
expect_eq "an unknown format: exit 2" 2 "$?"
finish
