#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Errors a new user causes (issue 38) are one line that names the problem and
# its fix: usage errors point at `kwitness CMD --help` (with "did you mean"),
# an unreachable kwitnessd names how to start it or --socket/KWITNESS_SOCKET,
# a missing key names `kwitness keygen --out`, a public JWK given as the
# signing key says so (kwitness and kwitnessd), a non-root `kwitness run`
# says it needs root or a granted cgroup, an unknown policy key lists the
# valid ones. Messages come from user/lib/messages.c.
. "$(dirname "$0")/../lib.sh"

T=$(mktemp -d /tmp/kwitness-msgtest.XXXXXX)
chmod 0755 "$T"
trap 'rm -rf "$T"' EXIT

# said NAME WANT-RC WANT-TEXT CMD...: ok when CMD exits WANT-RC with one line on
# stderr that holds WANT-TEXT (fixed string)
said() {
	local name=$1 want_rc=$2 want=$3 rc
	shift 3
	"$@" >/dev/null 2>"$T/err"
	rc=$?
	if [ $rc -eq "$want_rc" ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -qF -- "$want" "$T/err"; then
		ok "$name"
	else
		not_ok "$name (exit $rc, want $want_rc)"
		sed 's/^/#   /' "$T/err" | head -5
	fi
}

# usage errors: one line and the help to read, not the help itself
said "run: unknown option, one line" 125 "unknown option '--bogus'; see \`kwitness run --help\`" "$KW" run --bogus
said "run: near miss names --policy" 125 "(did you mean --policy?)" "$KW" run --polcy x -- true
said "run: missing --policy, one line" 125 "see \`kwitness run --help\`" "$KW" run -- true
said "verify: unknown option, one line" 2 "see \`kwitness verify --help\`" "$KW" verify --bogus
said "verify: no record, one line" 2 "see \`kwitness verify --help\`" "$KW" verify --allow-embedded-key
said "sign: near miss names --key" 2 "(did you mean --key?)" "$KW" sign --kye x
said "an option without its argument" 2 "option '--key' needs an argument; see \`kwitness sign --help\`" \
	"$KW" sign x --key
said "unknown command: did you mean verify" 2 "unknown command 'verfy' (did you mean 'verify'?); see \`kwitness --help\`" \
	"$KW" verfy
said "estate: did you mean query" 2 "(did you mean 'query'?); see \`kwitness estate --help\`" "$KW" estate qurey
said "tlog: unknown verb, one line" 2 "see \`kwitness tlog --help\`" "$KW" tlog nonesuch
said "kwitnessd: unknown option, one line" 2 "see \`kwitnessd --help\`" "$KWD" --bogus

# kwitnessd cannot be reached: how to start it, or where to point
said "unreachable: names systemctl start, --socket and KWITNESS_SOCKET" 1 \
	"(start it: \`systemctl start kwitnessd\`; or give its socket with --socket PATH or KWITNESS_SOCKET)" \
	"$KW" status --socket "$T/none.sock"
said "unreachable via KWITNESS_SOCKET: names the path" 1 "cannot reach kwitnessd at $T/env.sock" \
	env KWITNESS_SOCKET="$T/env.sock" "$KW" status
said "run: unreachable kwitnessd is 125" 125 "systemctl start kwitnessd" \
	"$KW" run --socket "$T/none.sock" --policy "$KW_ROOT/examples/demo-policy.json" -- true

# keys
"$KW" keygen --out "$T/key.pem" >/dev/null
"$KW" key show --key "$T/key.pem" --jwk >"$T/pub.jwk"
printf '{}\n' >"$T/rec.json"
said "missing key: names keygen --out and --key" 1 \
	"no signing key at $T/none.pem: create one with \`kwitness keygen --out $T/none.pem\`, or give another with --key FILE" \
	"$KW" sign --key "$T/none.pem" "$T/rec.json"
if [ -e /etc/kwitness/signing-key.pem ]; then
	skip "the default key path exists on this host"
else
	said "missing key at the default path: names keygen --out it" 1 \
		"create one with \`kwitness keygen --out /etc/kwitness/signing-key.pem\`" \
		env -u TRACE_PRIVATE_KEY_PEM "$KW" key show
fi
for mode in 0644 0600; do
	chmod "$mode" "$T/pub.jwk"
	said "a public JWK as the signing key ($mode): says it is a public key" 1 \
		"$T/pub.jwk is a public JWK, not a signing key" "$KW" sign --key "$T/pub.jwk" "$T/rec.json"
done
said "kwitnessd: a public JWK as --key says it is a public key" 1 "is a public JWK, not a signing key" \
	"$KWD" --foreground --config /dev/null --pin-dir none --key "$T/pub.jwk" \
	--state-dir "$T/state" --socket "$T/d.sock"
chmod 0644 "$T/key.pem"
said "a readable private key: names chmod 600" 1 "(run: chmod 600 $T/key.pem)" \
	"$KW" sign --key "$T/key.pem" "$T/rec.json"

# kwitness run as a user: needs root or a granted cgroup, and CMD never ran (125)
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	said "run as non-root: needs root or a granted cgroup" 125 "kwitness run needs root or a granted cgroup" \
		setpriv --reuid 65534 --regid 65534 --clear-groups "$KW" run \
		--policy "$KW_ROOT/examples/demo-policy.json" -- true
else
	skip "needs root and setpriv to become another user"
fi
said "run: CMD not found is 127" 127 "no-such-cmd-$$: command not found" \
	"$KW" run --socket "$T/none.sock" --policy "$KW_ROOT/examples/demo-policy.json" -- no-such-cmd-$$
finish
