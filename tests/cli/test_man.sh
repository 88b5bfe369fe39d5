#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The man pages: each renders with `man -l` without a groff warning, and each
# documents every option the matching --help prints (kwitness(1): every
# command's; kwitnessd(8); kwitness-oci-hook(1), with its annotations), and
# kwitness-policy(5) every key and class the policy documentation and the
# example policies use.
. "$(dirname "$0")/../lib.sh"

MAN=$KW_ROOT/man
if ! command -v man >/dev/null; then
	skip "man is not installed (scripts/deps.sh installs man-db)"
	finish
fi
T=$(mktemp -d /tmp/kwitness-mantest.XXXXXX)
trap 'rm -rf "$T"' EXIT

# render PAGE: the page as text, one paragraph a line (no hyphenation at this
# width); rendered once per page
render() {
	[ -f "$T/render.$1" ] || MANWIDTH=1000 LC_ALL=C.UTF-8 man -l "$MAN/$1" >"$T/render.$1" 2>/dev/null
	cat "$T/render.$1"
}

for page in kwitness.1 kwitnessd.8 kwitness-policy.5 kwitness-oci-hook.1; do
	if [ ! -f "$MAN/$page" ]; then
		not_ok "$page: missing"
		continue
	fi
	MANWIDTH=80 man --warnings -l "$MAN/$page" >"$T/out" 2>"$T/err"
	rc=$?
	if [ $rc -eq 0 ] && [ ! -s "$T/err" ] && grep -q '^NAME' "$T/out" &&
		grep -q '^SEE ALSO' "$T/out" && [ "$(wc -l <"$T/out")" -gt 20 ]; then
		ok "$page renders with man -l, no warnings"
	else
		not_ok "$page: man -l exit $rc"
		sed 's/^/#   /' "$T/err" | head -5
	fi
done

# options_of TEXT: every --long option and -x short option named in TEXT
options_of() { grep -oE -- '(^|[ ,[(|])--?[a-z][a-z0-9-]*' <<<"$1" | sed 's/^[ ,[(|]//' | sort -u; }

# documents PAGE LABEL HELP-TEXT: ok when PAGE names every option of HELP-TEXT
documents() {
	local page=$1 label=$2 text missing= o
	text=$(render "$page")
	for o in $(options_of "$3"); do
		grep -qF -- "$o" <<<"$text" || missing="$missing $o"
	done
	if [ -z "$missing" ]; then
		ok "$page documents every option of $label ($(options_of "$3" | wc -l))"
	else
		not_ok "$page lacks, from $label:$missing"
	fi
}

cmds=$("$KW" --help | awk '/^Commands:/ { on = 1; next } on && !NF { exit } on { print $1 }')
[ "$(wc -w <<<"$cmds")" -ge 10 ] || not_ok "kwitness --help lists no commands"
for c in $cmds; do
	case $c in
	oci-hook) continue ;;
	record) help=$("$KW" record build --help 2>&1) ;;
	*) help=$("$KW" "$c" --help 2>&1) ;;
	esac
	documents kwitness.1 "kwitness $c --help" "$help"
done
missing=
for c in $cmds; do grep -qE "(^| )kwitness $c( |$)" <<<"$(render kwitness.1)" || missing="$missing $c"; done
expect_eq "kwitness.1 has every command kwitness --help lists" "" "$missing"

documents kwitnessd.8 "kwitnessd --help" "$("$KWD" --help 2>&1)"

# The option tables themselves (KWITNESS_LIST_OPTIONS=1 makes a command print
# its getopt table, lib/options.h), so a new option cannot go undocumented
# even when its --help forgets it: every command's and every verb's options
# are in its man page.
table_of() { KWITNESS_LIST_OPTIONS=1 "$@" 2>/dev/null | grep -vxE -- '--help|-h'; }
# by_table PAGE LABEL CMD...: ok when PAGE names every option of CMD's table
by_table() {
	local page=$1 label=$2 text opts missing= o
	shift 2
	text=$(render "$page")
	opts=$(table_of "$@")
	if [ -z "$opts" ] && KWITNESS_LIST_OPTIONS=1 "$@" 2>/dev/null | grep -qx -- --help; then
		ok "$label: no option but --help"
		return
	fi
	for o in $opts; do
		grep -qE -- "(^|[^a-z-])$o([^a-z-]|$)" <<<"$text" || missing="$missing $o"
	done
	if [ -z "$opts" ]; then
		not_ok "$label: its option table is empty (KWITNESS_LIST_OPTIONS)"
	elif [ -z "$missing" ]; then
		ok "$page documents every option of $label's table ($(wc -w <<<"$opts"))"
	else
		not_ok "$page lacks, from $label's option table:$missing"
	fi
}
for c in $cmds; do
	page=kwitness.1
	[ "$c" = oci-hook ] && page=kwitness-oci-hook.1
	case $c in jcs|probe) continue ;; esac # no option table: --help above covers them
	verbs=$("$KW" "$c" --help 2>/dev/null | sed -n 's/^\(usage:\|      \) *kwitness '"$c"' \([a-z][a-z-]*\).*/\2/p' | sort -u)
	if [ -z "$verbs" ]; then
		by_table "$page" "kwitness $c" "$KW" "$c"
	else
		for v in $verbs; do by_table "$page" "kwitness $c $v" "$KW" "$c" "$v"; done
	fi
done
by_table kwitnessd.8 kwitnessd "$KWD"

# every key kwitnessd.conf takes (config.c's key comparisons) is in
# kwitnessd(8) and in docs/kwitnessd.md's table
keys=$(grep -o 'strcmp(key, "[a-z_]*")' "$KW_ROOT/user/kwitnessd/config.c" | sed 's/.*"\(.*\)")/\1/' | sort -u)
[ "$(wc -w <<<"$keys")" -ge 15 ] || not_ok "config.c: fewer than 15 config keys found ($(wc -w <<<"$keys"))"
missing= missing_doc=
text=$(render kwitnessd.8)
for k in $keys; do
	grep -qE "(^|[^a-z_])$k([^a-z_]|$)" <<<"$text" || missing="$missing $k"
	grep -qE "^\| \`([a-z_]*\`, \`)*$k\`" "$KW_ROOT/docs/kwitnessd.md" || missing_doc="$missing_doc $k"
done
expect_eq "kwitnessd.8 documents every config key ($(wc -w <<<"$keys"))" "" "$missing"
expect_eq "docs/kwitnessd.md's table has every config key" "" "$missing_doc"
documents kwitness-oci-hook.1 "kwitness oci-hook --help" "$("$KW" oci-hook --help 2>&1)"
missing=
for a in $("$KW" oci-hook --help | grep -oE 'io\.kwitness\.[a-z-]+' | sort -u); do
	grep -qF "$a" <<<"$(render kwitness-oci-hook.1)" || missing="$missing $a"
done
expect_eq "kwitness-oci-hook.1 documents every annotation --help names" "" "$missing"

# the policy page: every key of the example policies and every class of docs/policy.md
keys=$(python3 -c '
import json, sys
def walk(o, acc):
    if isinstance(o, dict):
        for k, v in o.items():
            acc.add(k); walk(v, acc)
    elif isinstance(o, list):
        for v in o: walk(v, acc)
acc = set()
for p in sys.argv[1:]:
    walk(json.load(open(p)), acc)
print("\n".join(sorted(acc)))' "$KW_ROOT"/examples/policies/*.json "$KW_ROOT"/examples/demo-policy.json)
classes=$(sed -n 's/^| `\([a-z.]*\)` | `KW_CLASS_[A-Z_]*`.*/\1/p' "$KW_ROOT/docs/policy.md")
[ -n "$classes" ] || not_ok "docs/policy.md: no class table found"
missing=
text=$(render kwitness-policy.5)
for k in $keys $classes signal_outside; do grep -qF "$k" <<<"$text" || missing="$missing $k"; done
expect_eq "kwitness-policy.5 documents every key and class ($(wc -w <<<"$keys $classes") names)" "" "$missing"
finish
