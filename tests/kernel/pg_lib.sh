# SPDX-License-Identifier: Apache-2.0
# A private PostgreSQL server for one test (Debian's postgresql package):
# a cluster made with initdb in a temporary folder, run as the unprivileged
# user nobody, listening on a Unix socket in that folder only (no TCP), with
# a database "estate" owned by the cluster's superuser "kwitness". No system
# service is touched. pg_cleanup stops it and removes the folder.
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
PG_TMP=
PGURL=

# Makes and starts the cluster; sets PG_TMP and PGURL. 1 (with the server's
# last lines as comments) when it cannot.
pg_init() {
	if [ -z "$PG_BIN" ] || [ ! -x "$PG_BIN/initdb" ]; then
		echo "# initdb not installed (scripts/deps.sh installs postgresql)"
		return 1
	fi
	PG_TMP=$(mktemp -d /tmp/kwitness-pg.XXXXXX)
	chown nobody "$PG_TMP"
	if ! runuser -u nobody -- "$PG_BIN/initdb" -D "$PG_TMP/data" -U kwitness -A trust -E UTF8 \
		--locale=C.UTF-8 >"$PG_TMP/initdb.log" 2>&1; then
		sed 's/^/# /' "$PG_TMP/initdb.log" | tail -5
		return 1
	fi
	pg_up || return 1
	"$PG_BIN/createdb" -h "$PG_TMP" -U kwitness estate || return 1
	PGURL="postgresql:///estate?host=$PG_TMP&user=kwitness"
}

pg_up() {
	runuser -u nobody -- "$PG_BIN/pg_ctl" -D "$PG_TMP/data" -l "$PG_TMP/server.log" -w \
		-o "-c listen_addresses='' -c unix_socket_directories='$PG_TMP' -c fsync=off" \
		start >/dev/null && return 0
	sed 's/^/# /' "$PG_TMP/server.log" | tail -5
	return 1
}

pg_down() {
	runuser -u nobody -- "$PG_BIN/pg_ctl" -D "$PG_TMP/data" -m fast -w stop >/dev/null
}

pg_cleanup() {
	[ -n "$PG_TMP" ] || return 0
	[ -f "$PG_TMP/data/postmaster.pid" ] &&
		runuser -u nobody -- "$PG_BIN/pg_ctl" -D "$PG_TMP/data" -m immediate stop >/dev/null 2>&1
	rm -rf "$PG_TMP"
	PG_TMP=
}

# pg_q SQL: the rows, one per line, columns joined by '|'.
pg_q() { "$PG_BIN/psql" -X -q -A -t -h "$PG_TMP" -U kwitness -d estate -c "$1"; }
