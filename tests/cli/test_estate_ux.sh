#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The estate never answers "nothing" silently (issue 38): a missing database
# is an error naming its path and `estate init` / `--create` (and is not
# made); `estate init` makes one; OBJECT values as the table prints them are
# accepted by --object (with ports, protocols, CIDRs); the default table fits
# 120 columns (--wide shows every column); `estate rejected` lists rejected
# records with their reasons; a missing trust folder names --trust.
source "$(dirname "$0")/../lib.sh"

LOGGEN=$KW_BUILD/tests/kw-loggen
T=$(mktemp -d /tmp/kw-estate-ux.XXXXXX)
trap 'rm -rf "$T"' EXIT
printf '{"kwitness_policy":1,"mode":"enforce","net":{"connect":["10.0.0.0/8:443"]}}\n' >"$T/bundle"
BH=$(sha256sum "$T/bundle" | cut -c1-64)
IMAGE=sha256:$(printf 'a%.0s' $(seq 64))
mkdir -p "$T/trust"
. "$KW_ROOT/tests/cli/estate_lib.sh"
S1=$(estate_session alpha 40 1 estate_sign_plain)
estate_session beta 30 2 estate_sign_plain >/dev/null
DB="sqlite:$T/e.sqlite"

# a missing database: an error naming the path and the fix; nothing is made
err=$("$KW" estate query --db "sqlite:$T/typo.sqlite" --count 2>&1 >/dev/null); rc=$?
expect_eq "query of a missing database: exit 2" 2 "$rc"
check "the error names the path and estate init" grep -qF \
	"no estate database at $T/typo.sqlite: give the right --db URL, or create it with \`kwitness estate init --db sqlite:$T/typo.sqlite\`" <<<"$err"
check "the missing database was not created" test ! -e "$T/typo.sqlite"
err=$("$KW" estate ingest --db "$DB" --trust "$T/trust" "$T/hosts" 2>&1 >/dev/null); rc=$?
expect_eq "ingest into a missing database without --create: exit 2, nothing made" "2 absent" \
	"$rc $(test -e "$T/e.sqlite" && echo present || echo absent)"
check "ingest names --create" grep -qF "(or \`estate ingest --create\`)" <<<"$err"
for v in verify "report --session x"; do
	# shellcheck disable=SC2086
	"$KW" estate $v --db "sqlite:$T/typo.sqlite" --trust "$T/trust" >/dev/null 2>"$T/err"
	rc=$?
	expect_eq "estate ${v%% *} of a missing database: exit 2, named, not made" "2 1 absent" \
		"$rc $(grep -c "no estate database at $T/typo.sqlite" "$T/err") $(test -e "$T/typo.sqlite" && echo present || echo absent)"
done
"$KW" estate rejected --db "sqlite:$T/typo.sqlite" >/dev/null 2>"$T/err"
expect_eq "estate rejected of a missing database: exit 2, named" "2 1" "$? $(grep -c "no estate database" "$T/err")"

out=$("$KW" estate init --db "sqlite:$T/init.sqlite"); rc=$?
expect_eq "estate init: exit 0, file made with mode 600" "0 600" "$rc $(stat -c %a "$T/init.sqlite")"
out=$("$KW" estate query --db "sqlite:$T/init.sqlite" --count); rc=$?
expect_eq "an initialised database answers: 0 decisions (exit 1)" "0 1" "$out $rc"

# missing trust folder: names --trust
err=$("$KW" estate ingest --create --db "$DB" --trust "$T/none" "$T/hosts" 2>&1 >/dev/null); rc=$?
expect_eq "missing trust folder: exit 2" 2 "$rc"
check "missing trust folder: names --trust DIR" grep -qF "cannot open the trust folder $T/none: no such folder (give the folder of the signers' public keys with --trust DIR" <<<"$err"

# a rejected record: a copy of alpha's record with one byte changed
mkdir -p "$T/bad/records" "$T/bad/logs" "$T/bad/policies"
cp "$T/hosts/alpha/logs/$S1.jsonl" "$T/bad/logs/"
cp "$T/hosts/alpha/policies/$BH" "$T/bad/policies/"
sed 's/spiffe:\/\/t\/alpha\/1/spiffe:\/\/t\/alpha\/X/' "$T/hosts/alpha/records/$S1.json" >"$T/bad/records/$S1.json"
out=$("$KW" estate ingest --create --db "$DB" --trust "$T/trust" "$T/hosts" "$T/bad"); rc=$?
expect_eq "ingest with --create: two stored, one rejected (exit 1)" 1 "$rc"
out=$("$KW" estate rejected --db "$DB"); rc=$?
expect_eq "estate rejected: exit 0, one record listed" "0 1" "$rc $(grep -c "$T/bad/records/$S1.json" <<<"$out")"
reason=$("$KW" estate rejected --db "$DB" --json | jq -r .reason)
check "estate rejected: the reason is a verify reason code" grep -qE '^[a-z_]+$' <<<"$reason"
expect_eq "estate rejected --json: path, session, reason, message" "true" \
	"$("$KW" estate rejected --db "$DB" --json | jq 'has("path") and has("session") and has("reason") and (.message | length > 0)')"
expect_eq "estate rejected --reason of another code: none (exit 1)" 1 \
	"$("$KW" estate rejected --db "$DB" --reason no_such_reason >/dev/null; echo $?)"
expect_eq "estate rejected --reason CODE: that one" 1 \
	"$("$KW" estate rejected --db "$DB" --reason "$reason" --json | grep -c .)"

# --object as printed
obj=$("$KW" estate query --db "$DB" --tool net.connect --limit 1 --json | jq -r .object)
host=${obj%%:*}
rest=${obj#*:}
port=${rest%%/*}
want=$("$KW" estate query --db "$DB" --json --limit 0 | jq -r .object | grep -cxF "$obj")
check "the printed OBJECT looks like HOST:PORT/PROTO ($obj)" grep -qE '^[0-9.]+:[0-9]+/[a-z]+$' <<<"$obj"
expect_eq "--object HOST:PORT/PROTO as printed: its rows" "$want" \
	"$("$KW" estate query --db "$DB" --object "$obj" --count)"
expect_eq "--object HOST:PORT: the same rows" "$want" "$("$KW" estate query --db "$DB" --object "$host:$port" --count)"
expect_eq "--object HOST:PORT/udp: none of them" 0 "$("$KW" estate query --db "$DB" --object "$host:$port/udp" --count)"
expect_eq "--object 'port N': every row on that port" \
	"$("$KW" estate query --db "$DB" --object "$port" --count)" \
	"$("$KW" estate query --db "$DB" --object "port $port" --count)"
expect_eq "--object HOST/32 (CIDR) still works" \
	"$("$KW" estate query --db "$DB" --object "$host" --count)" \
	"$("$KW" estate query --db "$DB" --object "$host/32" --count)"
err=$("$KW" estate query --db "$DB" --object "$host:99999/tcp" --count 2>&1 >/dev/null); rc=$?
expect_eq "--object with port 99999: exit 2" 2 "$rc"
check "--object with a bad port: says what it wants" grep -qF "want HOST:PORT[/PROTO]" <<<"$err"

# the default table fits 120 columns; --wide shows all
out=$("$KW" estate query --db "$DB" --limit 0)
widest=$(awk '{ if (length($0) > m) m = length($0) } END { print m }' <<<"$out")
check "the default table fits 120 columns (widest line $widest)" test "$widest" -le 120
expect_eq "the default table's columns" "TIME HOST SANDBOX TOOL OBJECT DECISION LEVEL" "$(head -1 <<<"$out" | tr -s ' ')"
expect_eq "--wide: every column (pod identity too)" 20 "$("$KW" estate query --db "$DB" --limit 1 --wide | head -1 | wc -w)"
expect_eq "the default table has every row" "$("$KW" estate query --db "$DB" --count)" "$(($(wc -l <<<"$out") - 1))"
finish
