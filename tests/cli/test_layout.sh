#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The house rules of user/ (docs/layout.md): the folders' include graph has no
# cycle, no file is over 800 lines, no function over 120. First the checker
# is shown to catch each breach in a small tree made here, then it measures
# the real one.
source "$(dirname "$0")/../lib.sh"
CHECK=$KW_ROOT/tests/helpers/layout_check.py
if ! command -v python3 >/dev/null; then
	skip "python3 is missing (scripts/deps.sh installs it)"
	finish
fi

T=$(mktemp -d /tmp/kw-layout.XXXXXX)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/user/a" "$T/user/b" "$T/user/c"
printf '#include "b/b.h"\n' >"$T/user/a/a.c"
printf '#include "c/c.h"\n' >"$T/user/b/b.h"
printf '#include "lib/x.h"\n' >"$T/user/c/c.h"
out=$(python3 "$CHECK" "$T" folders)
expect_eq "a chain of folders stacks in layers" "layer 0: c|layer 1: b|layer 2: a" "$(tr '\n' '|' <<<"$out" | sed 's/|$//')"
printf '#include "a/a.h"\n' >>"$T/user/c/c.h"
if out=$(python3 "$CHECK" "$T" folders); then
	not_ok "a cycle between folders is caught"
else
	expect_eq "a cycle between folders is caught" "folder cycle: a -> b -> c -> a" "$out"
fi

seq 801 | sed 's/.*/int x&;/' >"$T/user/a/long.c"
out=$(python3 "$CHECK" "$T" files) && not_ok "a file of 801 lines is caught" ||
	expect_eq "a file of 801 lines is caught" "user/a/long.c: 801 lines (at most 800)" "$out"
head -800 "$T/user/a/long.c" >"$T/user/a/long.c.new" && mv "$T/user/a/long.c.new" "$T/user/a/long.c"
check "a file of 800 lines passes" python3 "$CHECK" "$T" files

body() { # N lines of body, one of them a '{' as data
	echo 'int f(void)'
	echo '{'
	echo '	const char *s = "{"; char c = '"'{'"'; /* { */'
	seq $(($1 - 1)) | sed 's/.*/	(void)0;/'
	echo '}'
}
body 120 >"$T/user/b/f.c"
check "a function of 120 lines passes (braces in strings, characters and comments do not count)" \
	python3 "$CHECK" "$T" funcs
body 121 >"$T/user/b/f.c"
out=$(python3 "$CHECK" "$T" funcs) && not_ok "a function of 121 lines is caught" ||
	expect_eq "a function of 121 lines is caught" "user/b/f.c: f() is 121 lines (at most 120)" "$out"

# The real tree.
for rule in folders files funcs; do
	if out=$(python3 "$CHECK" "$KW_ROOT" $rule); then
		ok "user/: $rule"
	else
		not_ok "user/: $rule"
		sed 's/^/#   /' <<<"$out"
	fi
done
finish
