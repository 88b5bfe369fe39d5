#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# libkwitness as a runtime uses it: `make install` into a DESTDIR (with a
# PREFIX), the example built from the installed header through pkg-config,
# shared and static, run against a real kwitnessd: it opens a session for a
# cgroup, a process in the cgroup connects (one allowed, one denied), the
# example closes and reports the record, which verifies. Also: the CLI's
# `session open --pid`, built on the library's pid lookup.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/kwd_lib.sh"

kwd_require
command -v pkg-config >/dev/null || kt_fail_all "pkg-config is not installed (scripts/deps.sh)"
D=$KT_TMP/dest
if make -s -C "$KW_ROOT" install DESTDIR="$D" PREFIX=/opt/kw >"$KT_TMP/install.log" 2>&1; then
	ok "make install DESTDIR=... PREFIX=/opt/kw"
else
	not_ok "make install"
	sed 's/^/#   /' "$KT_TMP/install.log" | tail -5
fi
missing=
for f in bin/kwitness sbin/kwitnessd lib/libkwitness.so.2 lib/libkwitness.so lib/libkwitness.a \
	include/kwitness/client.h lib/pkgconfig/kwitness.pc share/man/man1/kwitness.1 \
	share/man/man1/kwitness-oci-hook.1 share/man/man5/kwitness-policy.5 share/man/man8/kwitnessd.8; do
	[ -e "$D/opt/kw/$f" ] || missing="$missing $f"
done
expect_eq "installed: binaries, libraries, header, .pc, man pages (under DESTDIR/PREFIX)" "" "$missing"
expect_eq "kwitness.pc names the PREFIX, not the DESTDIR" "-I/opt/kw/include" \
	"$(PKG_CONFIG_PATH=$D/opt/kw/lib/pkgconfig pkg-config --cflags kwitness | xargs)"
expect_eq "the shared library exports only kwitness_*" "" \
	"$(nm -D --defined-only "$D/opt/kw/lib/libkwitness.so.2" | awk '$2 == "T" && $3 !~ /^kwitness_/')"

export PKG_CONFIG_PATH=$D/opt/kw/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$D
# shellcheck disable=SC2046
if cc -o "$KT_TMP/ex-shared" "$KW_ROOT/examples/client/open_close.c" \
	$(pkg-config --cflags --libs kwitness) 2>"$KT_TMP/cc.log" &&
	cc -o "$KT_TMP/ex-static" "$KW_ROOT/examples/client/open_close.c" $(pkg-config --cflags kwitness) \
		-Wl,-Bstatic $(pkg-config --libs-only-L kwitness) -lkwitness -Wl,-Bdynamic \
		$(pkg-config --libs jansson) 2>>"$KT_TMP/cc.log"; then
	ok "the example builds against the installed library through pkg-config (shared and static)"
else
	not_ok "the example does not build through pkg-config"
	sed 's/^/#   /' "$KT_TMP/cc.log" | tail -5
fi
check "the shared build loads libkwitness.so.2 from the install" \
	bash -c "LD_LIBRARY_PATH='$D/opt/kw/lib' ldd '$KT_TMP/ex-shared' | grep -q '$D/opt/kw/lib/libkwitness.so.2'"
check "the static build needs no libkwitness.so" \
	bash -c "! ldd '$KT_TMP/ex-static' | grep -q libkwitness"
unset PKG_CONFIG_SYSROOT_DIR

kwd_start
listeners_start
POLICY=$(policy_file lib "{\"kwitness_policy\":1,\"mode\":\"enforce\",\"record\":\"all\",\"on_record_failure\":\"deny\",\"net\":{\"connect\":[\"127.0.0.1/32:$LPORT_A\"]}}")

# example BINARY NAME: runs the example on a fresh cgroup; a process in the
# cgroup connects twice while the session is open. Sets EXOUT.
example() {
	local cg fifo=$KT_TMP/$2.fifo pid
	cg=$(cg_make "$2")
	mkfifo "$fifo"
	KWITNESS_SOCKET=$KT_SOCK LD_LIBRARY_PATH=$D/opt/kw/lib "$1" "$cg" "$POLICY" \
		"spiffe://test.kwitness.local/lib/$2" "$DIGEST" <"$fifo" >"$KT_TMP/$2.out" 2>&1 &
	pid=$!
	exec 7>"$fifo"
	for _ in $(seq 100); do grep -q '^session ' "$KT_TMP/$2.out" && break; sleep 0.1; done
	cg_run "$cg" "$NP" connect 127.0.0.1 "$LPORT_A" >/dev/null 2>&1
	cg_run "$cg" "$NP" connect 127.0.0.1 "$LPORT_B" >/dev/null 2>&1
	exec 7>&-
	wait "$pid"
	EXOUT=$(cat "$KT_TMP/$2.out")
}

for kind in shared static; do
	example "$KT_TMP/ex-$kind" "ex-$kind"
	REC=$(sed -n 's/^record //p' <<<"$EXOUT")
	LOG=$(sed -n 's/^log //p' <<<"$EXOUT")
	POL=$POLICY
	if grep -qx 'decisions 2 denials 1 complete' <<<"$EXOUT" && [ -f "$REC" ] && verify_record; then
		ok "$kind example: opened, closed, 2 decisions 1 denial, the record verifies"
	else
		not_ok "$kind example"
		sed 's/^/#   /' <<<"$EXOUT"
	fi
done

out=$(KWITNESS_SOCKET=$KT_TMP/none.sock LD_LIBRARY_PATH=$D/opt/kw/lib "$KT_TMP/ex-shared" \
	"$KT_CG" "$POLICY" did:x "$DIGEST" </dev/null 2>&1)
expect_eq "no kwitnessd: the library's one-line message" \
	"open: cannot reach kwitnessd at $KT_TMP/none.sock: No such file or directory" "$out"
out=$(KWITNESS_SOCKET=$KT_SOCK LD_LIBRARY_PATH=$D/opt/kw/lib "$KT_TMP/ex-shared" \
	"$KT_CG/nonexistent" "$POLICY" did:x "$DIGEST" </dev/null 2>&1)
check "a refusal carries kwitnessd's code: $out" grep -q '^open: cgroup_not_found: ' <<<"$out"

# kwitness_sandbox_*: the library makes the cgroup, runs the command in it
# (a background child left running), kills what is left at close, removes it
# shellcheck disable=SC2046
if PKG_CONFIG_SYSROOT_DIR=$D cc -o "$KT_TMP/sbx" "$KW_ROOT/examples/client/sandbox.c" \
	$(PKG_CONFIG_SYSROOT_DIR=$D pkg-config --cflags --libs kwitness) 2>"$KT_TMP/cc-sbx.log"; then
	out=$(KWITNESS_SOCKET=$KT_SOCK LD_LIBRARY_PATH=$D/opt/kw/lib "$KT_TMP/sbx" "$POLICY" \
		spiffe://test.kwitness.local/lib/sandbox "$DIGEST" sh -c \
		"sleep 300 & '$NP' connect 127.0.0.1 $LPORT_A; '$NP' connect 127.0.0.1 $LPORT_B; exit 3" 2>&1)
	REC=$(sed -n 's/^record //p' <<<"$out")
	LOG=$(sed -n 's/^log //p' <<<"$out")
	cg=$(sed -n 's/^cgroup //p' <<<"$out")
	POL=$POLICY
	killed=$(jq -r 'select(.tool == "kwitness.close") | .killed' "$LOG" 2>/dev/null)
	if grep -qx 'decisions 2 denials 1 complete' <<<"$out" && grep -qx 'exit 3' <<<"$out" &&
		[ -f "$REC" ] && verify_record && [ -n "$cg" ] && [ ! -e "$cg" ] &&
		[ "${killed:-0}" -ge 1 ]; then
		ok "kwitness_sandbox: command in its own cgroup, 2 decisions 1 denial, the sleeper killed ($killed), cgroup removed, record verifies"
	else
		not_ok "kwitness_sandbox (killed: $killed)"
		sed 's/^/#   /' <<<"$out"
	fi
	out=$(KWITNESS_SOCKET=$KT_SOCK LD_LIBRARY_PATH=$D/opt/kw/lib "$KT_TMP/sbx" "$POLICY" \
		did:example:nocmd "$DIGEST" /nonexistent/cmd 2>&1)
	check "kwitness_sandbox_spawn: a command that cannot be run is an error naming it ($(head -1 <<<"$out"))" \
		grep -q '^spawn: /nonexistent/cmd: No such file or directory' <<<"$out"
else
	not_ok "the sandbox example does not build"
	sed 's/^/#   /' "$KT_TMP/cc-sbx.log" | tail -5
fi

# session open --pid: the session is on the process's cgroup
cg=$(cg_make bypid)
# (not through cg_run: a backgrounded function is a subshell with a pid of its own)
sh -c 'echo $$ >"$0/cgroup.procs" && exec sleep 30' "$cg" &
sleeper=$!
for _ in $(seq 50); do grep -qx "$sleeper" "$cg/cgroup.procs" && break; sleep 0.1; done
sid=$("$KW" session open --socket "$KT_SOCK" --pid "$sleeper" --policy "$POLICY" \
	--sandbox-id spiffe://test.kwitness.local/lib/bypid --image-digest "$DIGEST")
listed=$("$KW" session list --socket "$KT_SOCK" --json | jq -r --arg s "$sid" '.sessions[] | select(.session == $s) | .cgroup')
expect_eq "session open --pid: the session is on the process's cgroup" "$cg" "$listed"
kill "$sleeper" 2>/dev/null
wait "$sleeper" 2>/dev/null
[ -n "$sid" ] && session_close "$sid" >/dev/null
expect_eq "session open --pid 0: usage (2)" 2 \
	"$("$KW" session open --socket "$KT_SOCK" --pid 0 --policy "$POLICY" --sandbox-id did:x --image-digest "$DIGEST" 2>/dev/null; echo $?)"
finish
