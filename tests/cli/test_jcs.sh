#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kwitness jcs: canonical bytes for good input, "FILE:LINE:COL: message" and
# exit 1 for bad input, exit 2 for usage errors.
source "$(dirname "$0")/../lib.sh"
V=$VECTORS
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

if [ ! -x "$KW" ]; then
	not_ok "kwitness binary missing at $KW"
	finish
fi

# Every conformance pair, byte for byte (cmp also catches a trailing newline).
# values.json holds 1E30, beyond the integer rule (docs/canonical-json.md): it
# is refused at that number, and matches with 1E15 in its place.
for f in "$V"/jcs/input/*.json; do
	b=$(basename "$f")
	want=$V/jcs/output/$b
	if [ "$b" = values.json ]; then
		"$KW" jcs "$f" >/dev/null 2>"$T/err"
		expect_eq "jcs values.json: 1E30 is refused" \
			"kwitness jcs: $f:2:35: integer-valued number outside +-(2^53-1)" "$(cat "$T/err")"
		sed 's/1E30/1E15/' "$f" >"$T/in.json"
		sed 's/1e+30/1000000000000000/' "$want" >"$T/want.json"
		f=$T/in.json want=$T/want.json
	fi
	if "$KW" jcs "$f" >"$T/out" 2>"$T/err" && cmp -s "$T/out" "$want"; then
		ok "jcs $b matches the reference output"
	else
		not_ok "jcs $b matches the reference output"; sed 's/^/#   /' "$T/err"
	fi
done
"$KW" jcs "$V/rfc/rfc8785/section-3.2.3-input.json" >"$T/out"
check "RFC 8785 section 3.2.3 (UTF-16 member order)" cmp -s "$T/out" "$V/rfc/rfc8785/section-3.2.3-output.json"

# Standard input, both ways.
got=$(printf '{"b": [1.0, 1e2, -0], "a": "\\u00e9\\/"}' | "$KW" jcs)
expect_eq "stdin without FILE" '{"a":"é/","b":[1,100,0]}' "$got"
got=$(printf ' "x" ' | "$KW" jcs -)
expect_eq "stdin as -" '"x"' "$got"
printf '[1]' | "$KW" jcs >"$T/out"
check "no trailing newline" [ "$(wc -c <"$T/out")" -eq 3 ]

# Bad input: exit 1 and FILE:LINE:COL.
printf '{\n  "a": 1,\n  "a": 2\n}\n' >"$T/dup.json"
"$KW" jcs "$T/dup.json" >"$T/out" 2>"$T/err"; rc=$?
expect_eq "duplicate name exits 1" 1 "$rc"
expect_eq "duplicate name: file, line and column" \
	"kwitness jcs: $T/dup.json:3:3: duplicate member name \"a\"" "$(cat "$T/err")"
check "nothing on stdout for bad input" [ ! -s "$T/out" ]

printf '[1,\n 9007199254740992]' | "$KW" jcs 2>"$T/err"; rc=$?
expect_eq "unsafe integer exits 1" 1 "$rc"
expect_eq "unsafe integer message" "kwitness jcs: <stdin>:2:2: integer outside +-(2^53-1)" "$(cat "$T/err")"
# The same rule for every spelling of an integer beyond 2^53 - 1.
printf '[1,\n 1e16]' | "$KW" jcs 2>"$T/err"; rc=$?
expect_eq "1e16 exits 1 like 9007199254740992" 1 "$rc"
expect_eq "1e16 message" "kwitness jcs: <stdin>:2:2: integer-valued number outside +-(2^53-1)" "$(cat "$T/err")"
expect_eq "2^53 - 1 in exponent form is accepted" "[9007199254740991,1000000000000000]" \
	"$(printf '[9.007199254740991e15,1e15]' | "$KW" jcs)"

printf '"\xed\xa0\x80"' | "$KW" jcs 2>"$T/err"; rc=$?
expect_eq "UTF-8 surrogate exits 1" 1 "$rc"
check "UTF-8 surrogate message" grep -q '<stdin>:1:2: invalid UTF-8' "$T/err"

printf '{} {}' | "$KW" jcs 2>"$T/err"; rc=$?
expect_eq "trailing content exits 1" 1 "$rc"
check "trailing content message" grep -q '<stdin>:1:4: trailing content' "$T/err"

"$KW" jcs "$T/missing.json" 2>"$T/err"; rc=$?
expect_eq "missing file exits 1" 1 "$rc"
check "missing file message" grep -q 'No such file' "$T/err"

# The input bound: one byte over 256 MiB is refused with a clear message.
head -c $((256 * 1024 * 1024 + 1)) /dev/zero | "$KW" jcs 2>"$T/err" >/dev/null; rc=$?
expect_eq "oversized input exits 1" 1 "$rc"
check "oversized input message" grep -q 'input larger than 256 MiB' "$T/err"

# A large document goes out in pieces, checked whole first. The oracle is
# Python's json module: with ASCII names, integers, strings and booleans only,
# sorted keys and no white space are RFC 8785.
if command -v python3 >/dev/null; then
	python3 - "$T/big.json" "$T/big.want" <<'PY'
import json, random, sys
random.seed(3)
docs = [{"seq": i, "host": "10.0.%d.%d" % (i % 256, i % 7), "ok": i % 3 == 0,
         "comm": random.choice(["curl", "caf\u00e9", "\u6d4b\u8bd5", "a\"b\\c\n"]),
         "nested": [{"z": i, "y": [i, -i]}, []]} for i in range(40000)]
for d in docs:
    items = list(d.items()); random.shuffle(items); d.clear(); d.update(items)
open(sys.argv[1], "w").write(json.dumps(docs, indent=1))
open(sys.argv[2], "w", encoding="utf-8").write(
    json.dumps(docs, sort_keys=True, separators=(",", ":"), ensure_ascii=False))
PY
	check "large document (many chunks): the canonical bytes" \
		bash -c '"$1" jcs "$2" | cmp -s - "$3"' _ "$KW" "$T/big.json" "$T/big.want"
	# Refused at its very end, after megabytes of good elements: nothing printed.
	sed '$ s/]$/, {"a": 1, "a": 2}]/' "$T/big.json" >"$T/late.json"
	"$KW" jcs "$T/late.json" >"$T/out" 2>"$T/err"; rc=$?
	expect_eq "late duplicate in a large document exits 1" 1 "$rc"
	check "late duplicate: nothing on stdout" [ ! -s "$T/out" ]
	check "late duplicate: its message" grep -q 'duplicate member name "a"' "$T/err"
	# Write errors: exit 1 with a message, a closed pipe included.
	"$KW" jcs "$T/big.json" >/dev/full 2>"$T/err"; rc=$?
	expect_eq "full disk exits 1" 1 "$rc"
	check "full disk message" grep -q 'kwitness jcs: writing output: No space left on device' "$T/err"
	( "$KW" jcs "$T/big.json" 2>"$T/err"; echo $? >"$T/rc" ) | head -c 10 >/dev/null
	expect_eq "closed pipe exits 1" 1 "$(cat "$T/rc")"
	check "closed pipe message" grep -q 'kwitness jcs: writing output: Broken pipe' "$T/err"
else
	skip "large document (no python3)"
fi
printf '[1,2]' | "$KW" jcs >/dev/full 2>"$T/err"; rc=$?
expect_eq "full disk, small document, exits 1" 1 "$rc"
check "full disk, small document, message" grep -q 'writing output: No space left' "$T/err"

# Usage.
"$KW" jcs --help >"$T/out"; rc=$?
expect_eq "--help exits 0" 0 "$rc"
check "--help prints usage" grep -q '^usage: kwitness jcs \[FILE\]' "$T/out"
"$KW" jcs --bogus 2>/dev/null; rc=$?
expect_eq "unknown option exits 2" 2 "$rc"
"$KW" jcs a.json b.json 2>/dev/null; rc=$?
expect_eq "two files exit 2" 2 "$rc"

finish
