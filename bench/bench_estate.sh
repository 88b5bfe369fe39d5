#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench_estate: `kwitness estate ingest` rate (entries/s) into SQLite and into
# PostgreSQL (a private cluster made here), against the baseline of the same
# run: `kwitness verify --dir --jobs 1` of the same state folders (the
# verification alone, no database). Then the "who did this" query latency
# (one address, denied connects) against grep over the same logs.
#
# The estate is synthetic but shaped like a real one: HOSTS state folders,
# each with its own Ed25519 key, hostname and machine id, SESSIONS sessions
# per host of DECISIONS kwitnessd-shaped net.connect decisions (kw-loggen),
# each record really signed. Defaults: 20 x 5 x 2000 = 200,000 decisions.
# ESTATE_GEN=c: the estate comes from bench/gen_estate instead (the same
# code kwitnessd writes logs and records with, in one process per core; a
# session mixes net.connect, net.send, fs.open and fs.exec decisions with
# proc entries, and one denied connect to 203.0.113.66 is planted, which
# the query then looks for). ESTATE_SCALE=full: 200 hosts x 50 sessions x
# 1000 = 10 M decisions, with ESTATE_GEN=c unless told otherwise (the shell
# generator takes hours for it; gen_estate 77 s here, 2.5 GB of logs).
# Run from the repository root after `make all` (needs build/tests/kw-loggen;
# ESTATE_GEN=c: build/bench/gen_estate, `make test-bins`).
set -euo pipefail
cd "$(dirname "$0")/.."
B=${KW_BUILD:-$PWD/build}
KW=$B/kwitness
LOGGEN=$B/tests/kw-loggen
HOSTS=${HOSTS:-20} SESSIONS=${SESSIONS:-5} DECISIONS=${DECISIONS:-2000}
GEN_ESTATE=$B/bench/gen_estate
if [ "${ESTATE_SCALE:-}" = full ]; then
	HOSTS=200 SESSIONS=50 DECISIONS=1000
	ESTATE_GEN=${ESTATE_GEN:-c}
fi
ESTATE_GEN=${ESTATE_GEN:-shell}
[ "$ESTATE_GEN" = c ] && LOGGEN=$GEN_ESTATE
for b in "$KW" "$LOGGEN"; do
	[ -x "$b" ] || { echo "bench_estate: $b not built (make all)" >&2; exit 1; }
done
T=$(mktemp -d /tmp/kwitness-bench-estate.XXXXXX)
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
PG_UP=
cleanup() {
	[ -n "$PG_UP" ] && as_pg "$PG_BIN/pg_ctl" -D "$T/pg/data" -m immediate stop >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT
# ESTATE_KEEP=DIR: the generated estate is kept in DIR and reused by the
# next run with the same DIR (generation takes longer than the ingest).
D=${ESTATE_KEEP:-$T}
mkdir -p "$D"
# PostgreSQL refuses to run as root: the cluster belongs to nobody then.
as_pg() { if [ "$(id -u)" -eq 0 ]; then runuser -u nobody -- "$@"; else "$@"; fi; }
now() { date +%s.%N; }
# timed CMD...: runs CMD; sets WALL and CPU (user + system of CMD and its
# children: the client side only, not a PostgreSQL server's work).
timed() {
	local TIMEFORMAT='%R %U %S' t
	t=$( { time "$@" >"$T/timed.out" 2>&1; } 2>&1 ) || { cat "$T/timed.out" >&2; return 1; }
	read -r WALL u sy <<<"$t"
	CPU=$(awk -v a="$u" -v b="$sy" 'BEGIN { printf "%.2f", a + b }')
}
rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.0f", n / s }'; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

t0=$(now)
if [ -s "$D/generated" ]; then
	read -r HOSTS SESSIONS DECISIONS <"$D/generated"
	echo "bench_estate: reusing $D: $HOSTS hosts x $SESSIONS sessions x $DECISIONS decisions"
elif [ "$ESTATE_GEN" = c ]; then
	echo "bench_estate: generating $HOSTS hosts x $SESSIONS sessions x $DECISIONS decisions (gen_estate)"
	t0=$(now)
	"$GEN_ESTATE" --out "$D" --hosts "$HOSTS" --sessions "$SESSIONS" --decisions "$DECISIONS" \
		--jobs "$(nproc)" >"$D/planted"
else
printf '{"kwitness_policy":1,"mode":"enforce","net":{"connect":["10.0.0.0/8:443"]}}\n' >"$D/bundle"
BH=$(sha256sum "$D/bundle" | cut -c1-64)
IMAGE=sha256:$(printf 'a%.0s' $(seq 64))
mkdir -p "$D/trust" "$D/hosts"

echo "bench_estate: generating $HOSTS hosts x $SESSIONS sessions x $DECISIONS decisions"
t0=$(now)
for h in $(seq "$HOSTS"); do
	H=$D/hosts/host-$h
	mkdir -p "$H/records" "$H/logs" "$H/policies"
	cp "$D/bundle" "$H/policies/$BH"
	"$KW" keygen --out "$D/key-$h.pem" >/dev/null
	"$KW" key show --key "$D/key-$h.pem" --jwk >"$D/trust/host-$h.jwk"
	mid=$(printf 'machine-%s' "$h" | sha256sum | cut -c1-32)
	for s in $(seq "$SESSIONS"); do
		sid=$(printf 'session-%s-%s' "$h" "$s" | sha256sum | cut -c1-32)
		sbx=spiffe://bench.kwitness.local/host-$h/agent-$s
		"$LOGGEN" --decisions "$DECISIONS" --session "$sid" --sandbox-id "$sbx" \
			--bundle-hash "sha256:$BH" --image-digest "$IMAGE" --seed "$((h * 1000 + s))" \
			--hostname "host-$h" --machine-id "$mid" --hash-out "$D/hash" >"$H/logs/$sid.jsonl"
		read -r th n <"$D/hash"
		"$KW" record build --sandbox-id "$sbx" --image-digest "$IMAGE" --policy "$D/bundle" \
			--transcript-hash "$th" --call-count "$n" --enforcement-mode enforce \
			--model-provider anthropic --model-id claude-x |
			"$KW" sign --key "$D/key-$h.pem" - >"$H/records/$sid.json"
	done
done
echo "$HOSTS $SESSIONS $DECISIONS" >"$D/generated"
fi
ENTRIES=$(cat "$D"/hosts/*/logs/*.jsonl | wc -l)
DECS=$((HOSTS * SESSIONS * DECISIONS))
echo "generated $ENTRIES log lines ($DECS decisions, $(du -sh "$D/hosts" | cut -f1)) in $(secs "$t0" "$(now)") s"
# ESTATE_GENERATE_ONLY=1 (with ESTATE_KEEP): make the estate, measure nothing.
[ -n "${ESTATE_GENERATE_ONLY:-}" ] && exit 0

# --- baseline: the verification alone -------------------------------------
verify_all() {
	for h in $(seq "$HOSTS"); do
		"$KW" verify --key "$D/trust/host-$h.jwk" --max-age 0 --jobs "$VJOBS" --dir "$D/hosts/host-$h" || return 1
	done
}
VJOBS=1
timed verify_all
VERIFY_CPU=$CPU
echo "baseline  verify --dir --jobs 1 (no database): $WALL s wall, $CPU s CPU:" \
	"$(rate "$ENTRIES" "$WALL") entries/s wall, $(rate "$ENTRIES" "$CPU") per CPU-second"
VJOBS=$(nproc)
timed verify_all
echo "          verify --dir --jobs $VJOBS: $WALL s wall, $(rate "$ENTRIES" "$WALL") entries/s wall"
# The ingest's entries per CPU-second as a share of verify's (same entries).
of_verify() { awk -v v="$VERIFY_CPU" -v c="$CPU" 'BEGIN { printf "%.0f%%", 100 * v / c }'; }

# --- SQLite -----------------------------------------------------------------
timed "$KW" estate ingest --create --db "sqlite:$T/estate.sqlite" --trust "$D/trust" "$D/hosts"
tail -1 "$T/timed.out"
echo "sqlite    estate ingest: $WALL s wall, $CPU s CPU: $(rate "$ENTRIES" "$WALL") entries/s wall," \
	"$(rate "$ENTRIES" "$CPU") per CPU-second, $(of_verify) of verify's" \
	"($(du -h "$T/estate.sqlite" | cut -f1) database)"

# --- PostgreSQL -------------------------------------------------------------
pg_ok=
if [ -n "$PG_BIN" ] && [ -x "$PG_BIN/initdb" ]; then
	mkdir -p "$T/pg"
	[ "$(id -u)" -eq 0 ] && { chmod 755 "$T"; chown nobody "$T/pg"; }
	if as_pg "$PG_BIN/initdb" -D "$T/pg/data" -U kwitness -A trust -E UTF8 --locale=C.UTF-8 \
		>"$T/pg/initdb.log" 2>&1 &&
		as_pg "$PG_BIN/pg_ctl" -D "$T/pg/data" -l "$T/pg/server.log" -w \
			-o "-c listen_addresses='' -c unix_socket_directories='$T/pg'" start >/dev/null; then
		PG_UP=1
		"$PG_BIN/createdb" -h "$T/pg" -U kwitness estate && pg_ok=1
	fi
fi
PGURL="postgresql:///estate?host=$T/pg&user=kwitness"
if [ -n "$pg_ok" ]; then
	timed "$KW" estate ingest --create --db "$PGURL" --trust "$D/trust" "$D/hosts"
	tail -1 "$T/timed.out"
	echo "postgres  estate ingest (COPY): $WALL s wall, $(rate "$ENTRIES" "$WALL") entries/s wall" \
		"(client $CPU s CPU, $(rate "$ENTRIES" "$CPU") per CPU-second, $(of_verify) of verify's;" \
		"the server's work is not counted;" \
		"$("$PG_BIN/psql" -h "$T/pg" -U kwitness -d estate -Atc \
			"SELECT pg_size_pretty(pg_database_size('estate'))") database)"
	# The private cluster is initdb's defaults but for the socket: say which.
	echo "postgres  cluster: PostgreSQL $("$PG_BIN/psql" -h "$T/pg" -U kwitness -d estate -Atc \
		"SELECT current_setting('server_version') || ', ' || string_agg(name || ' ' || setting ||
		coalesce(unit, ''), ', ' ORDER BY name) FROM pg_settings WHERE name IN ('fsync',
		'synchronous_commit', 'wal_level', 'shared_buffers', 'max_wal_size',
		'maintenance_work_mem', 'max_parallel_maintenance_workers')")"
else
	echo "postgres  skipped: no PostgreSQL server binaries (scripts/deps.sh installs postgresql)"
fi

# --- who did this: one address's denied connects ----------------------------
# gen_estate's estate: the planted address; else the first one host-1 denied.
if [ -s "$D/planted" ]; then
	addr=203.0.113.66
else
	addr=$(grep -m1 '"decision":"deny"' "$D/hosts/host-1/logs/"*.jsonl | head -1 | sed 's/.*"host":"\([^"]*\)".*/\1/')
fi
query() { "$KW" estate query --db "$1" --tool net.connect --decision deny --object "$addr" --json >/dev/null; }
lat() {
	local t0 n=5
	query "$1" # warm
	t0=$(now)
	for _ in $(seq $n); do query "$1"; done
	awk -v a="$t0" -v b="$(now)" -v n=$n 'BEGIN { printf "%.1f", (b - a) * 1000 / n }'
}
t0=$(now)
rows=$(cat "$D"/hosts/*/logs/*.jsonl | grep -F "\"host\":\"$addr\"" | grep -c '"decision":"deny"' || true)
tg=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", (b - a) * 1000 }')
echo "query     who denied-connected to $addr ($rows rows): sqlite $(lat "sqlite:$T/estate.sqlite") ms per query (process start included)"
[ -n "$pg_ok" ] && echo "query     the same on postgres: $(lat "$PGURL") ms per query"
echo "baseline  grep over every log for the same rows: $tg ms"
