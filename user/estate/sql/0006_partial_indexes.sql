-- SPDX-License-Identifier: Apache-2.0
-- kwitness estate database, migration 6: the entries indexes on addr, port
-- and host hold only the rows that have one. Most entries (file opens,
-- execs, process entries) have none, and a bulk ingest builds these
-- indexes after its load by sorting every row it indexes. Every query on
-- these columns compares them (=, >=, <=), which only a non-NULL value
-- passes, so both engines still use them.
DROP INDEX IF EXISTS entries_addr;
CREATE INDEX entries_addr ON entries (addr) WHERE addr IS NOT NULL;
DROP INDEX IF EXISTS entries_port;
CREATE INDEX entries_port ON entries (port) WHERE port IS NOT NULL;
DROP INDEX IF EXISTS entries_host;
CREATE INDEX entries_host ON entries (host) WHERE host IS NOT NULL;
