#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench_jcs_cli: `kwitness jcs FILE > /dev/null` on a ~25 MB decision-log-like
# document against the JS reference in the same run (the canonicalize
# package on Node, the test oracle scripts/deps.sh installs), ROUNDS rounds
# alternating the two, the file in the page cache. Prints each round's wall,
# user and system time, the ratio, and each one's system share of its run.
# KW_BEFORE=/path/to/an/older/kwitness adds that build to every round (same
# output checked), so that two builds are compared under the same load.
# Usage: bench/bench_jcs_cli.sh [MEGABYTES [ROUNDS]]   (default 25 5)
set -euo pipefail
cd "$(dirname "$0")/.."
B=${KW_BUILD:-$PWD/build}
KW=$B/kwitness
KW_BEFORE=${KW_BEFORE:-}
MB=${1:-25} ROUNDS=${2:-5}
CANON=$B/npm/node_modules/canonicalize
[ -x "$KW" ] || { echo "bench_jcs_cli: $KW not built (make all)" >&2; exit 1; }
T=$(mktemp -d /tmp/kwitness-bench-jcs.XXXXXX)
trap 'rm -rf "$T" "$B/npm/kw-bench-ref.mjs"' EXIT

# The document: an array of net.connect-shaped entries, members out of
# order, some UTF-8 and escapes, as bench_jcs builds it.
python3 - "$T/doc.json" "$MB" <<'EOF'
import json, random, sys
random.seed(7)
path, mb = sys.argv[1], float(sys.argv[2])
comms = ["curl", "python3", "caf\u00e9-agent", "\u6d4b\u8bd5", "bash\t\"x\""]
out, size, i = [], 0, 0
while size < mb * 1e6:
    e = {"seq": i, "ts": 1796000000000000 + i * 17, "tool": "net.connect",
         "decision": random.choice(["permit", "deny"]), "enforced": random.random() < 0.5,
         "host": "10.%d.%d.%d" % (random.randrange(256), random.randrange(256), random.randrange(256)),
         "port": random.randrange(65536), "proto": "tcp", "pid": random.randrange(1 << 22),
         "uid": random.randrange(2000), "comm": random.choice(comms), "cgroup": str(random.randrange(1 << 40)),
         "rule": "net.connect[%d]" % random.randrange(40)}
    items = list(e.items()); random.shuffle(items)
    s = json.dumps(dict(items), ensure_ascii=random.random() < 0.3)
    out.append(s); size += len(s) + 2; i += 1
open(path, "w").write("[\n" + ",\n".join(out) + "\n]\n")
EOF
cat "$T/doc.json" >/dev/null
SIZE=$(stat -c %s "$T/doc.json")
echo "bench_jcs_cli: document $((SIZE / 1000000)) MB, $ROUNDS rounds alternating, load: $(cut -d' ' -f1-3 /proc/loadavg)"

# Equal output first: the comparison is between two canonical forms of it.
have_node=
if command -v node >/dev/null && [ -f "$CANON/package.json" ]; then
	have_node=1
	# An ES module (the package is one), beside its node_modules.
	cat >"$B/npm/kw-bench-ref.mjs" <<'EOF'
import fs from "fs";
import canonicalize from "canonicalize";
fs.writeFileSync(1, canonicalize(JSON.parse(fs.readFileSync(process.argv[2], "utf8"))));
EOF
	"$KW" jcs "$T/doc.json" >"$T/kw.out"
	node "$B/npm/kw-bench-ref.mjs" "$T/doc.json" >"$T/node.out"
	cmp -s "$T/kw.out" "$T/node.out" && echo "same output as canonicalize: yes" ||
		echo "same output as canonicalize: NO"
else
	echo "no node or $CANON (scripts/deps.sh): kwitness alone"
fi
if [ -n "$KW_BEFORE" ]; then
	"$KW_BEFORE" jcs "$T/doc.json" >"$T/before.out"
	"$KW" jcs "$T/doc.json" | cmp -s - "$T/before.out" && echo "same output as $KW_BEFORE: yes" ||
		echo "same output as $KW_BEFORE: NO"
fi

# timed CMD...: WALL USER SYS of CMD.
timed() {
	local TIMEFORMAT='%R %U %S'
	{ time "$@" >/dev/null; } 2>&1
}
# The floor under any run: the process starting (36 shared libraries).
echo '{}' >"$T/empty.json"
read -r ew eu es <<<"$(timed "$KW" jcs "$T/empty.json")"
echo "kwitness jcs of {} (process start): $ew s wall, user $eu, sys $es"
# kw_round LABEL BINARY: one timed run of BINARY against Node's NW NU NS.
kw_round() {
	read -r kw ku ks <<<"$(timed "$2" jcs "$T/doc.json")"
	awk -v l="$1" -v w="$kw" -v u="$ku" -v s="$ks" -v n="$SIZE" 'BEGIN {
		printf "  %s: %.3f s wall (%.0f MB/s), user %.3f, sys %.3f (sys %.0f%% of its CPU)",
			l, w, n / w / 1e6, u, s, 100 * s / (u + s + 1e-9) }'
	[ -z "$have_node" ] || awk -v w="$nw" -v u="$nu" -v s="$ns" -v k="$kw" -v kc="$ku+$ks" 'BEGIN {
		split(kc, a, "+");
		printf "; %.1fx Node by wall, %.1fx by CPU", w / k, (u + s) / (a[1] + a[2]) }'
	echo
}
for r in $(seq "$ROUNDS"); do
	nw=0 nu=0 ns=0
	if [ -n "$have_node" ]; then
		read -r nw nu ns <<<"$(timed node "$B/npm/kw-bench-ref.mjs" "$T/doc.json")"
		awk -v w="$nw" -v u="$nu" -v s="$ns" -v r="$r" 'BEGIN {
			printf "round %d: node %.3f s wall, user %.3f, sys %.3f (sys %.0f%% of its CPU)\n",
				r, w, u, s, 100 * s / (u + s + 1e-9) }'
	else
		echo "round $r:"
	fi
	# Which build goes first alternates from round to round.
	if [ -n "$KW_BEFORE" ] && [ $((r % 2)) = 0 ]; then
		kw_round before "$KW_BEFORE"
		kw_round "kwitness jcs" "$KW"
	else
		kw_round "kwitness jcs" "$KW"
		[ -z "$KW_BEFORE" ] || kw_round before "$KW_BEFORE"
	fi
done
