#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kwitnessd's files and keys: the key never stays in the environment (also
# with --key), no core dumps and no same-uid ptrace, the key in locked memory;
# state, socket and pin folders that others could change are refused; a log
# swapped for a symlink or a FIFO is neither followed nor waited on.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kwd_lib.sh"

kwd_require

start_fail() { # NAME WANT_TEXT ARGS...: kwitnessd exits non-zero, saying WANT_TEXT
	local name=$1 want=$2 out rc
	shift 2
	out=$(timeout 20 "$KWD" --foreground --key "$KT_TMP/key.pem" --config /dev/null "$@" 2>&1)
	rc=$?
	if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -qF -- "$want" <<<"$out" &&
		[ "$(wc -l <<<"$out")" -eq 1 ]; then
		ok "$name"
	else
		not_ok "$name (exit $rc)"
		echo "#   $out" | head -3
	fi
}

# --- a log swapped for a symlink or a FIFO, found at start ------------------
mkdir -p "$KT_TMP/state/logs" "$KT_TMP/state/records" "$KT_TMP/state/policies"
chmod 0750 "$KT_TMP/state" "$KT_TMP/state/logs" "$KT_TMP/state/records" "$KT_TMP/state/policies"
printf 'victim\n' >"$KT_TMP/victim"
LINKED=0123456789abcdef0123456789abcdef FIFO=fedcba9876543210fedcba9876543210
ln -s "$KT_TMP/victim" "$KT_TMP/state/logs/$LINKED.jsonl"
mkfifo "$KT_TMP/state/logs/$FIFO.jsonl"

# --- start with the key on the command line AND in the environment ---------
"$KW" keygen --out "$KT_TMP/env-key.pem" >/dev/null
KT_SOCK=$KT_TMP/kwitnessd.sock
TRACE_PRIVATE_KEY_PEM=$(cat "$KT_TMP/env-key.pem") "$KWD" --foreground -v \
	--state-dir "$KT_TMP/state" --socket "$KT_SOCK" --key "$KT_TMP/key.pem" --pin-dir none \
	--config /dev/null 2>>"$KT_TMP/kwitnessd.log" &
KT_DPID=$! P=$!
for _ in $(seq 100); do [ -S "$KT_SOCK" ] && break; kwd_alive || break; sleep 0.1; done
if [ -S "$KT_SOCK" ]; then
	ok "kwitnessd starts with a symlinked and a FIFO log left in its state folder"
else
	not_ok "kwitnessd starts with a symlinked and a FIFO log left in its state folder"
	sed 's/^/# /' "$KT_TMP/kwitnessd.log" | tail -3
	finish
fi
expect_eq "the symlinked log's target is untouched (not followed at seal)" victim \
	"$(cat "$KT_TMP/victim")"
check "the symlinked log is not followed (ELOOP) and not sealed" \
	grep -q "session $LINKED was not closed and cannot be sealed: .*Too many levels of symbolic links" \
	"$KT_TMP/kwitnessd.log"
check "the FIFO log is reported as not sealable (not waited on)" \
	grep -q "session $FIFO was not closed and cannot be sealed" "$KT_TMP/kwitnessd.log"
[ -e "$KT_TMP/state/records/$LINKED.json" ] && not_ok "no record for the symlinked log" ||
	ok "no record for the symlinked log"

expect_eq "with --key, TRACE_PRIVATE_KEY_PEM is wiped from /proc/PID/environ too" 0 \
	"$(tr '\0' '\n' <"/proc/$P/environ" | grep -c 'PRIVATE KEY')"
expect_eq "the variable itself is gone from /proc/PID/environ" 0 \
	"$(tr '\0' '\n' <"/proc/$P/environ" | grep -c '^TRACE_PRIVATE_KEY_PEM=')"
expect_eq "RLIMIT_CORE is 0 (soft and hard)" "0 0" \
	"$(awk '/^Max core file size/ { print $5, $6 }' "/proc/$P/limits")"
lck=$(awk '/^VmLck:/ { print $2 }' "/proc/$P/status")
if [ "${lck:-0}" -gt 0 ]; then ok "locked memory: VmLck $lck kB"; else not_ok "locked memory: VmLck ${lck:-?} kB"; fi
n=$(sed -n 's/.*signing key loaded into locked memory (\([0-9]*\) bytes.*/\1/p' "$KT_TMP/kwitnessd.log")
if [ "${n:-0}" -ge 32 ]; then
	ok "the private key (32 bytes) is in the locked secure heap ($n bytes used)"
else
	not_ok "the private key is in the locked secure heap (${n:-no} bytes used)"
fi
kwd_stop || not_ok "kwitnessd stopped"

# --- not dumpable: same-uid processes cannot ptrace it ---------------------
# Both sides without CAP_SYS_PTRACE: then only the dumpable flag decides
# whether /proc/PID/exe can be read. A plain process started the same way
# is the control.
if command -v capsh >/dev/null; then
	rm -f "$KT_TMP/kwitnessd.sock"
	capsh --drop=cap_sys_ptrace -- -c "exec \"\$0\" \"\$@\"" "$KWD" --foreground -v \
		--state-dir "$KT_TMP/state" --socket "$KT_TMP/kwitnessd.sock" --key "$KT_TMP/key.pem" \
		--pin-dir none --config /dev/null 2>>"$KT_TMP/kwitnessd.log" &
	KT_DPID=$!
	capsh --drop=cap_sys_ptrace -- -c 'exec sleep 60' &
	S=$!
	for _ in $(seq 100); do [ -S "$KT_TMP/kwitnessd.sock" ] && break; sleep 0.1; done
	ctl=$(capsh --drop=cap_sys_ptrace -- -c "readlink /proc/$S/exe" 2>/dev/null)
	got=$(capsh --drop=cap_sys_ptrace -- -c "readlink /proc/$KT_DPID/exe" 2>/dev/null)
	kill "$S" 2>/dev/null
	if [ -z "$ctl" ]; then
		skip "same-uid ptrace check: the control process is not readable either"
	else
		expect_eq "not dumpable: a same-uid process cannot read /proc/PID/exe (control: $ctl)" "" "$got"
	fi
	kwd_stop || not_ok "kwitnessd stopped"
else
	skip "capsh (libcap2-bin) not installed: dumpable check"
fi

# --- folders others could change are refused --------------------------------
mkdir -m 0777 "$KT_TMP/ww-state"
start_fail "a world-writable state folder is refused" "writable by group or others" \
	--state-dir "$KT_TMP/ww-state" --socket "$KT_TMP/f1.sock" --pin-dir none
mkdir -m 0770 "$KT_TMP/gw-state"
start_fail "a group-writable state folder is refused" "writable by group or others" \
	--state-dir "$KT_TMP/gw-state" --socket "$KT_TMP/f2.sock" --pin-dir none
mkdir -m 0750 "$KT_TMP/nobody-state"
chown 65534 "$KT_TMP/nobody-state"
start_fail "a state folder owned by another user is refused" "owned by uid" \
	--state-dir "$KT_TMP/nobody-state" --socket "$KT_TMP/f3.sock" --pin-dir none
mkdir -p -m 0777 "$KT_TMP/open-parent"
chmod 0777 "$KT_TMP/open-parent"
start_fail "a state folder under a world-writable (not sticky) folder is refused" "its parent" \
	--state-dir "$KT_TMP/open-parent/state" --socket "$KT_TMP/f4.sock" --pin-dir none
mkdir -p "$KT_TMP/good-state/logs" && chmod 0777 "$KT_TMP/good-state/logs"
start_fail "a world-writable logs subfolder is refused" "logs is writable by group or others" \
	--state-dir "$KT_TMP/good-state" --socket "$KT_TMP/f5.sock" --pin-dir none
mkdir -m 0777 "$KT_TMP/ww-sock"
start_fail "a world-writable socket folder is refused" "socket folder" \
	--state-dir "$KT_TMP/s6" --socket "$KT_TMP/ww-sock/kw.sock" --pin-dir none
[ -e "$KT_TMP/ww-sock/kw.sock" ] && not_ok "no socket made in the refused folder" ||
	ok "no socket made in the refused folder"
mkdir -m 0777 "$KT_TMP/ww-pins"
start_fail "a world-writable pin folder is refused" "pin folder" \
	--state-dir "$KT_TMP/s7" --socket "$KT_TMP/f7.sock" --pin-dir "$KT_TMP/ww-pins"
ln -s "$KT_TMP/ww-state" "$KT_TMP/link-state"
start_fail "a symlink to a world-writable state folder is judged by its target" \
	"writable by group or others" --state-dir "$KT_TMP/link-state" --socket "$KT_TMP/f8.sock" \
	--pin-dir none
finish
