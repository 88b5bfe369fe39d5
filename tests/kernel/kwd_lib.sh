# SPDX-License-Identifier: Apache-2.0
# Helpers for the kwitnessd kernel tests (sourced after tests/lib.sh).
# Each test run gets a private state folder, socket, key and cgroup tree under
# the cgroup2 mount; kwd_cleanup (installed as an EXIT trap) stops the daemon,
# kills what is left in the test cgroups and removes them.

NP=$KW_BUILD/tests/kw-netprobe
KT_TMP=
KT_CG=
KT_DPID=
KT_LPID=
KT_SOCK=
KT_PIN=

# Skips the whole file (one skip line, exit 0) with a reason.
kt_skip_all() {
	skip "$*"
	finish
}

# Skips the whole file because the kernel lacks FEATURE (see skip_feature).
kt_skip_feature() {
	skip_feature "$@"
	finish
}

# Fails the whole file: what it needs is broken, not missing.
kt_fail_all() {
	not_ok "$*"
	finish
}

kwd_cleanup() {
	set +e
	[ -n "$KT_LPID" ] && kill "$KT_LPID" 2>/dev/null
	if [ -n "$KT_DPID" ] && kill -0 "$KT_DPID" 2>/dev/null; then
		kill -TERM "$KT_DPID" 2>/dev/null
		for _ in $(seq 50); do kill -0 "$KT_DPID" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$KT_DPID" 2>/dev/null
	fi
	[ -n "$KT_CG" ] && rm_cgroup "$KT_CG"
	# pinned sessions: their links go with the pins
	[ -n "$KT_PIN" ] && [ -d "$KT_PIN" ] && rm -rf "$KT_PIN"
	if [ -n "$KT_TMP" ]; then
		mountpoint -q "$KT_TMP/state" 2>/dev/null && umount -l "$KT_TMP/state"
		rm -rf "$KT_TMP"
	fi
}

# Checks root, cgroup2 and the binaries; sets KT_TMP, KT_CG.
kwd_require() {
	[ "$(id -u)" -eq 0 ] || kt_skip_all "kwitnessd tests need root"
	for b in "$KW" "$KWD" "$NP"; do
		[ -x "$b" ] || kt_fail_all "$b not built (make test-bins)"
	done
	local mnt
	mnt=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
	[ -n "$mnt" ] || kt_skip_feature cgroup.net "no cgroup2 mount"
	KT_TMP=$(mktemp -d /tmp/kwitness-ktest.XXXXXX)
	KT_CG=$mnt/kwitness-test-$$
	mkdir -p "$KT_CG" || kt_fail_all "cannot make a cgroup under $mnt"
	trap kwd_cleanup EXIT
	# A suite killed (a timeout, ^C) cleans up too: bash runs the EXIT
	# trap only when it exits, so the signals become exits.
	trap 'exit 129' HUP
	trap 'exit 130' INT
	trap 'exit 143' TERM
	"$KW" keygen --out "$KT_TMP/key.pem" >/dev/null
	"$KW" key show --key "$KT_TMP/key.pem" --jwk >"$KT_TMP/signer.jwk"
}

# Starts kwitnessd with extra options and waits for its socket. A daemon that
# does not start is a failure (of the whole file), never a skip.
kwd_start() {
	KT_SOCK=$KT_TMP/kwitnessd.sock
	"$KWD" --foreground -v --state-dir "$KT_TMP/state" --socket "$KT_SOCK" \
		--key "$KT_TMP/key.pem" --pin-dir none --config /dev/null "$@" \
		2>>"$KT_TMP/kwitnessd.log" &
	KT_DPID=$!
	# loading every program takes seconds under emulation, more on a busy host
	for _ in $(seq 600); do
		[ -S "$KT_SOCK" ] && return 0
		if ! kill -0 "$KT_DPID" 2>/dev/null; then
			KT_DPID=
			sed 's/^/# /' "$KT_TMP/kwitnessd.log" | tail -5
			kt_fail_all "kwitnessd did not start"
		fi
		sleep 0.1
	done
	sed 's/^/# /' "$KT_TMP/kwitnessd.log" | tail -5
	kt_fail_all "kwitnessd did not open its socket within 60 s"
}

# kwd_start_pinned [OPTIONS]: kwd_start with the pin folder KT_PIN; waits until
# it answers (a killed collector leaves its socket file behind); 1 when it
# does not.
kwd_start_pinned() {
	kwd_start --pin-dir "$KT_PIN" "$@"
	for _ in $(seq 300); do
		"$KW" session list --socket "$KT_SOCK" >/dev/null 2>&1 && return 0
		kwd_alive || break
		sleep 0.05
	done
	return 1
}

# Stops kwitnessd with SIGTERM; fails (after a SIGKILL) when it did not stop
# within 30 s (detaching every program waits for RCU grace periods, which an
# emulated VM on a busy host can stretch past 10 s). After a SIGKILL it
# still waits until the process is gone, so that the next collector never
# meets this one's state folder lock. Works for a detached collector too (not our child).
kwd_stop() {
	local pid=$KT_DPID
	[ -n "$pid" ] || return 0
	KT_DPID=
	kill -TERM "$pid" 2>/dev/null
	kwd_gone "$pid" 300 && return 0
	kill -KILL "$pid" 2>/dev/null
	kwd_gone "$pid" 300
	return 1
}

# Waits up to TENTHS tenths of a second for process PID to end.
kwd_gone() {
	local pid=$1 tenths=$2
	for _ in $(seq "$tenths"); do
		kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; return 0; }
		# a zombie is a stopped process that no one reaped
		[ "$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null)" = Z ] && return 0
		sleep 0.1
	done
	return 1
}

kwd_alive() { [ -n "$KT_DPID" ] && kill -0 "$KT_DPID" 2>/dev/null; }

# Classes the running daemon can enforce, one per line.
kwd_hooks() { "$KW" status --socket "$KT_SOCK" | sed -n 's/^hooks: *//p' | tr ' ' '\n'; }
kwd_has_hook() { kwd_hooks | grep -qx "$1"; }

# Starts two TCP listeners on free ports (127.0.0.1 and ::1); sets LPORT_A,
# LPORT_B. Free ports, not fixed ones: suites may run side by side.
listeners_start() {
	"$NP" listen 0 0 >"$KT_TMP/listen.out" &
	KT_LPID=$!
	for _ in $(seq 50); do [ -s "$KT_TMP/listen.out" ] && break; sleep 0.1; done
	read -r _ LPORT_A LPORT_B <"$KT_TMP/listen.out"
	[ -n "$LPORT_B" ] || kt_fail_all "kw-netprobe could not listen on 127.0.0.1"
}

# Two adjacent TCP ports no socket uses now, for bind tests: BPORT_A, BPORT_B.
free_ports() {
	local p
	for p in $(shuf -i 30000-60000 -n 64); do
		if [ -z "$(ss -Htan "( sport = :$p or sport = :$((p + 1)) )")" ]; then
			BPORT_A=$p BPORT_B=$((p + 1))
			return 0
		fi
	done
	kt_fail_all "no free pair of TCP ports"
}

# A new cgroup under the test tree; prints its path.
cg_make() {
	mkdir -p "$KT_CG/$1" && echo "$KT_CG/$1"
}

# cg_run CGROUP CMD...: runs CMD inside CGROUP (joins before exec).
cg_run() {
	local cg=$1
	shift
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" "$@"
}

# A policy file from JSON text; prints its path.
policy_file() { # NAME TEXT
	printf '%s' "$2" >"$KT_TMP/$1.json"
	echo "$KT_TMP/$1.json"
}

DIGEST=sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa

# session_open CGROUP POLICY [SANDBOX]: prints the session id (empty on error,
# the error on stderr).
session_open() {
	"$KW" session open --socket "$KT_SOCK" --cgroup "$1" --policy "$2" \
		--sandbox-id "${3:-spiffe://test.kwitness.local/s/$$}" --image-digest "$DIGEST"
}

# session_close ID: closes and sets REC, LOG, POL (paths) and prints the summary.
session_close() {
	local out
	out=$("$KW" session close --socket "$KT_SOCK" "$1") || { echo "$out"; return 1; }
	REC=$(sed -n 's/^record: *//p' <<<"$out")
	LOG=$(sed -n 's/^log: *//p' <<<"$out")
	POL=$(sed -n 's/^policy: *//p' <<<"$out")
	echo "$out"
}

# jfield LINE KEY: a member of a flat canonical JSON object (strings unquoted).
jfield() {
	sed -n "s/.*\"$2\":\(\"\([^\"]*\)\"\|\([^,}\"]*\)\).*/\2\3/p" <<<"$1"
}

# policy_session NAME MODE ON_RECORD_FAILURE SECTION: writes policy NAME,
# {"kwitness_policy":1,"mode":MODE,"record":"all","on_record_failure":...,SECTION},
# makes cgroup NAME and opens a session for it there. Sets cg and sid (the
# caller's locals where it declares them); returns 1 when no session opened.
policy_session() {
	local pol
	pol=$(policy_file "$1" \
		"{\"kwitness_policy\":1,\"mode\":\"$2\",\"record\":\"all\",\"on_record_failure\":\"$3\",$4}")
	cg=$(cg_make "$1")
	sid=$(session_open "$cg" "$pol")
	[ -n "$sid" ]
}

# entry_mismatch LINE WANT: the "key=value;..." pairs of WANT that the log
# entry LINE does not hold, each as " key=got (want value)"; empty when all do.
entry_mismatch() {
	local line=$1 kv k v bad=
	IFS=';' read -ra kv <<<"$2"
	for k in "${kv[@]}"; do
		v=$(jfield "$line" "${k%%=*}")
		[ "$v" = "${k#*=}" ] || bad="$bad ${k%%=*}=$v (want ${k#*=})"
	done
	printf '%s' "$bad"
}

# check_entry LABEL LINE WANT CGROUP: ok LABEL when the log entry LINE holds
# WANT, names CGROUP and has seq, ts, uid, comm and rule; else not_ok with
# what differs, and the entry as a comment.
check_entry() {
	local label=$1 line=$2 cg=$4 bad k
	bad=$(entry_mismatch "$line" "$3")
	[ "$(jfield "$line" cgroup)" = "$(stat -c %i "$cg")" ] || bad="$bad cgroup"
	for k in seq ts uid comm rule; do
		[ -n "$(jfield "$line" $k)" ] || bad="$bad no-$k"
	done
	if [ -z "$bad" ]; then ok "$label"; else
		not_ok "$label:$bad"
		echo "#   $line"
	fi
}

# Decision entries of a log (not the open/close entries, not proc entries).
decisions() { grep -v -e '"tool":"kwitness\.' -e '"tool":"proc"' "$1"; }
# oci_setup: the OCI runtime suites' common ground, after listeners_start:
# STATE (kwitnessd's state folder), POLICY (connects to LPORT_A only), POLDIR
# (the hook's policy folder, holding it as oci.json) and PROBE (what a
# container runs: both connections, each followed by its exit status).
oci_setup() {
	STATE=$KT_TMP/state
	POLICY=$(policy_file oci "{\"kwitness_policy\":1,\"mode\":\"enforce\",\"record\":\"all\",\"on_record_failure\":\"deny\",\"net\":{\"connect\":[\"127.0.0.1/32:$LPORT_A\"]}}")
	POLDIR=$KT_TMP/policies
	mkdir -p -m 755 "$POLDIR"
	cp "$POLICY" "$POLDIR/oci.json"
	PROBE="nc 127.0.0.1 $LPORT_A </dev/null; echo allowed=\$?; nc 127.0.0.1 $LPORT_B </dev/null; echo denied=\$?"
}
# numbered LOG: the entries that take sequence numbers (decisions and proc entries)
numbered() { grep -v '"tool":"kwitness\.' "$1"; }
trailer() { grep '"tool":"kwitness.close"' "$1"; }

# verify_record [ARGS]: kwitness verify against the signer's JWK, the log and the bundle.
verify_record() {
	"$KW" verify --key "$KT_TMP/signer.jwk" --log "$LOG" --policy "$POL" "$@" "$REC" >/dev/null
}
# verify_incomplete: the record of an incomplete log fails with log_incomplete,
# and verifies with --allow-incomplete (a warning).
verify_incomplete() {
	local out
	out=$("$KW" verify --key "$KT_TMP/signer.jwk" --log "$LOG" --policy "$POL" "$REC")
	[ $? -eq 1 ] && [[ $out == "invalid: log_incomplete: "* ]] || return 1
	out=$("$KW" verify --key "$KT_TMP/signer.jwk" --log "$LOG" --policy "$POL" --allow-incomplete "$REC")
	[ $? -eq 0 ] && [[ $out == "warning: log_incomplete: "* ]] && [[ $out == *"completeness: INCOMPLETE"* ]]
}

# kt_user_add PREFIX: a throwaway user and group (PREFIX u/g + our pid) in
# KT_USER/KT_GROUP, U and G their ids, removed by kt_user_del (after
# kwd_cleanup, from the suite's EXIT trap). The VM has no shadow tools: there
# the same entries are written by hand.
kt_user_add() {
	KT_USER=${1}u$$ KT_GROUP=${1}g$$ KT_PWFILES=0
	trap 'kwd_cleanup; kt_user_del' EXIT
	if command -v useradd >/dev/null && command -v groupadd >/dev/null; then
		groupadd "$KT_GROUP" && useradd -M -N -g "$KT_GROUP" -s /bin/false "$KT_USER" ||
			kt_skip_all "useradd failed"
	else
		KT_PWFILES=1
		local id=$((40000 + $$ % 20000))
		echo "$KT_GROUP:x:$id:" >>/etc/group
		echo "$KT_USER:x:$id:$id::/:/bin/false" >>/etc/passwd
	fi
	U=$(id -u "$KT_USER") G=$(id -g "$KT_USER")
}
kt_user_del() {
	if [ "$KT_PWFILES" = 1 ]; then
		sed -i "/^$KT_USER:/d" /etc/passwd
		sed -i "/^$KT_GROUP:/d" /etc/group
	else
		userdel "$KT_USER" 2>/dev/null
		groupdel "$KT_GROUP" 2>/dev/null
	fi
}

# stalled_witness_start: a witness that accepts, reads nothing, answers nothing
# and holds every connection (for 300 s); WPORT its port, WPID its process,
# killed by the EXIT trap this sets.
stalled_witness_start() {
	python3 -c '
import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
print(s.getsockname()[1], flush=True)
held = []
s.settimeout(1)
end = time.time() + 300
while time.time() < end:
    try:
        held.append(s.accept()[0])
    except socket.timeout:
        pass
' >"$KT_TMP/witness.port" &
	WPID=$!
	trap 'kill $WPID 2>/dev/null; kwd_cleanup' EXIT
	for _ in $(seq 50); do [ -s "$KT_TMP/witness.port" ] && break; sleep 0.1; done
	WPORT=$(cat "$KT_TMP/witness.port")
}
