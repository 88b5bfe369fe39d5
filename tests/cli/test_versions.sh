#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# --version of both binaries: the version git describe gives this checkout
# (or a release tarball's VERSION file), and the SHA-256 of each BPF object
# equal to sha256sum of the object the build wrote. And the metrics address:
# only loopback or a unix socket, refused at once otherwise.
. "$(dirname "$0")/../lib.sh"

T=$(mktemp -d /tmp/kwitness-versions.XXXXXX)
trap 'rm -rf "$T"' EXIT

# the version the build recorded: git describe of this checkout (the build
# may have seen the tree clean or dirty, so the -dirty mark is not compared)
want=
if [ -e "$KW_ROOT/.git" ]; then
	want=$(git -C "$KW_ROOT" describe --tags --always 2>/dev/null)
fi
for prog in kwitness kwitnessd; do
	bin=$KW_BUILD/$prog
	out=$("$bin" --version)
	expect_eq "$prog --version exits 0" 0 "$?"
	first=$(head -n1 <<<"$out")
	if [ -n "$want" ]; then
		expect_eq "$prog --version: the version is git describe's" "$prog $want" "${first%-dirty}"
	else
		check "$prog --version names a version" grep -qE "^$prog [A-Za-z0-9._+~-]+$" <<<"$first"
	fi
	for obj in kwitness.bpf.o kwitness-nokfunc.bpf.o; do
		got=$(sed -n "s/^bpf $obj //p" <<<"$out")
		expect_eq "$prog --version: $obj's hash is sha256sum of the built object" \
			"sha256:$(sha256sum "$KW_BUILD/$obj" | cut -d' ' -f1)" "$got"
	done
done

# A release tarball has no .git: the VERSION file's first line (only the
# characters a version may hold) is the version; without either, "unknown".
mkdir -p "$T/tree"
printf '2.0.1\n' >"$T/tree/VERSION"
(cd "$T/tree" && make -s -n -f "$KW_ROOT/Makefile" BUILD="$T/b" deps >/dev/null 2>&1)
expect_eq "no .git: the version comes from VERSION" '#define KW_VERSION "2.0.1"' "$(cat "$T/b/version.h")"
printf '2.0.1"; int x\n' >"$T/tree/VERSION"
(cd "$T/tree" && make -s -n -f "$KW_ROOT/Makefile" BUILD="$T/b" deps >/dev/null 2>&1)
expect_eq "no .git: VERSION cannot break out of the C string" '#define KW_VERSION "2.0.1intx"' \
	"$(cat "$T/b/version.h")"
rm "$T/tree/VERSION"
(cd "$T/tree" && make -s -n -f "$KW_ROOT/Makefile" BUILD="$T/b" deps >/dev/null 2>&1)
expect_eq "neither .git nor VERSION: unknown" '#define KW_VERSION "unknown"' "$(cat "$T/b/version.h")"

# --metrics: a non-loopback address is a usage error, said before anything starts
for a in 0.0.0.0:9464 10.1.2.3:9464 '[::]:9464' '[2001:db8::1]:9464' example.com:9464 \
	127.0.0.1:0 127.0.0.1:65536 127.0.0.1 unix:relative/path; do
	out=$("$KWD" --metrics "$a" 2>&1)
	rc=$?
	if [ $rc -eq 2 ] && grep -qF -- "--metrics: metrics address '$a'" <<<"$out"; then
		ok "--metrics $a is refused (exit 2, named)"
	else
		not_ok "--metrics $a: exit $rc: $out"
	fi
done
grep -qF "not a loopback address" <<<"$("$KWD" --metrics 10.1.2.3:9464 2>&1)"
expect_eq "--metrics 10.1.2.3:9464: says it is not loopback" 0 "$?"
# the configuration key is checked the same way, with FILE:LINE
printf '# ops\nmetrics = 192.168.1.1:9464\n' >"$T/bad.conf"
out=$("$KWD" --foreground --config "$T/bad.conf" --state-dir "$T/state" --socket "$T/s" 2>&1)
rc=$?
if [ $rc -ne 0 ] && grep -qF "bad.conf:2: metrics address '192.168.1.1:9464': not a loopback" <<<"$out"; then
	ok "config metrics = 192.168.1.1:9464 is refused with FILE:LINE"
else
	not_ok "config metrics = non-loopback: exit $rc: $out"
fi
printf 'metrics_session_labels = 65\n' >"$T/labels.conf"
out=$("$KWD" --foreground --config "$T/labels.conf" --state-dir "$T/state" --socket "$T/s" 2>&1)
check "config metrics_session_labels above 64 is refused" grep -qF "labels.conf:1: metrics_session_labels must be a number from 0 to 64" <<<"$out"

finish
