#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make install and make uninstall (issue 38), staged under DESTDIR: the
# binaries, libkwitness, the systemd units (ExecStart at the prefix), the
# example config (kwitnessd.conf only when there is none), bash and zsh
# completion, every man page; no ldconfig for a staged install, ldconfig
# (and a daemon-reload) for a system one; uninstall leaves no file behind,
# and keeps an edited kwitnessd.conf.
. "$(dirname "$0")/../lib.sh"

if ! command -v make >/dev/null; then
	skip "make is not installed"
	finish
fi
T=$(mktemp -d /tmp/kwitness-install.XXXXXX)
trap 'rm -rf "$T"' EXIT
# ldconfig and systemctl that only say they ran
mkdir -p "$T/shim"
for c in ldconfig systemctl; do
	printf '#!/bin/sh\necho "$0 $*" >>%s/ran\n' "$T" >"$T/shim/$c"
	chmod +x "$T/shim/$c"
done
mk() { PATH="$T/shim:$PATH" make -s --no-print-directory -C "$KW_ROOT" BUILD="$KW_BUILD" "$@" >"$T/make.out" 2>&1; }

D=$T/dest
mk install DESTDIR="$D"
expect_eq "make install DESTDIR=...: exit 0" 0 "$?"
for f in usr/local/bin/kwitness usr/local/sbin/kwitnessd usr/local/lib/libkwitness.so.2 \
	usr/local/lib/libkwitness.so usr/local/include/kwitness/client.h usr/local/lib/pkgconfig/kwitness.pc \
	usr/local/lib/systemd/system/kwitnessd.service usr/local/lib/systemd/system/kwitness-estate-push.service \
	etc/kwitness/kwitnessd.conf etc/kwitness/kwitnessd.conf.example \
	usr/local/share/bash-completion/completions/kwitness usr/local/share/bash-completion/completions/kwitnessd \
	usr/local/share/zsh/site-functions/_kwitness; do
	check "installed: /$f" test -e "$D/$f"
done
for m in "$KW_ROOT"/man/*.[1-8]; do
	b=$(basename "$m")
	check "installed: man page $b" cmp -s "$m" "$D/usr/local/share/man/man${b##*.}/$b"
done
expect_eq "the unit starts the installed kwitnessd" "ExecStart=/usr/local/sbin/kwitnessd --foreground" \
	"$(grep '^ExecStart=' "$D/usr/local/lib/systemd/system/kwitnessd.service")"
check "the config installed is the example" cmp -s "$KW_ROOT/examples/systemd/kwitnessd.conf" "$D/etc/kwitness/kwitnessd.conf"
check "zsh completion sources the installed bash completion" \
	grep -qF 'source "/usr/local/share/bash-completion/completions/kwitness"' "$D/usr/local/share/zsh/site-functions/_kwitness"
check "a staged install runs no ldconfig" test ! -e "$T/ran"
# the bash completion completes from the installed binary's own tables
got=$(PATH="$D/usr/local/bin:$PATH" bash -c '. "$1"; COMP_WORDS=(kwitness estate query --obj); COMP_CWORD=3; _kwitness; echo "${COMPREPLY[*]}"' _ \
	"$D/usr/local/share/bash-completion/completions/kwitness")
expect_eq "bash completion: kwitness estate query --obj<TAB>" "--object" "$got"
got=$(PATH="$D/usr/local/bin:$PATH" bash -c '. "$1"; COMP_WORDS=(kwitness prun); COMP_CWORD=1; _kwitness; echo "${COMPREPLY[*]}"' _ \
	"$D/usr/local/share/bash-completion/completions/kwitness")
expect_eq "bash completion: kwitness prun<TAB>" "prune" "$got"

# a second install keeps an edited config
echo "group = edited" >>"$D/etc/kwitness/kwitnessd.conf"
mk install DESTDIR="$D"
check "a second install keeps the edited kwitnessd.conf" grep -q "group = edited" "$D/etc/kwitness/kwitnessd.conf"
mk uninstall DESTDIR="$D"
expect_eq "make uninstall: exit 0" 0 "$?"
expect_eq "uninstall leaves only the edited config" "$D/etc/kwitness/kwitnessd.conf" \
	"$(find "$D" \( -type f -o -type l \) | sort | paste -sd' ')"
rm "$D/etc/kwitness/kwitnessd.conf"
mk install DESTDIR="$D" && mk uninstall DESTDIR="$D"
expect_eq "install then uninstall: no file or link left" "" "$(find "$D" \( -type f -o -type l \))"

# a system install (no DESTDIR; every folder under $T): ldconfig runs
S=$T/sys
mk install PREFIX="$S/usr" SYSCONFDIR="$S/etc"
expect_eq "a system install: exit 0" 0 "$?"
check "a system install runs ldconfig" grep -q "ldconfig" "$T/ran"
mk uninstall PREFIX="$S/usr" SYSCONFDIR="$S/etc"
expect_eq "its uninstall: nothing left" "" "$(find "$S" \( -type f -o -type l \))"
finish
