-- SPDX-License-Identifier: Apache-2.0
-- kwitness estate database, migration 5: the process entries ("tool":
-- "proc", docs/decision-log.md) of each record's log, one row per entry, for
-- `estate query --exe`, `--digest` and `--ancestor` (lineage.c fills them at
-- ingest; records ingested before this version have none).
CREATE TABLE procs (
	record_id    BIGINT NOT NULL REFERENCES records (id),
	line         BIGINT NOT NULL,   -- the entry's line in entries
	seq          BIGINT,
	proc         TEXT NOT NULL,     -- the process reference "<pid>-<start>"
	tree_parent  TEXT,              -- the parent of the process's first entry: its place in the tree
	event        TEXT NOT NULL,     -- fork, exec, seen, open
	-- The program the process runs from this entry on: its exec's (or, at
	-- open, /proc's); a fork's child runs its parent's (inherited 1).
	exe          TEXT,
	argv         TEXT,              -- the arguments joined by spaces
	digest       TEXT,              -- "sha256:<hex>" from the exec decision
	inherited    INTEGER NOT NULL,
	PRIMARY KEY (record_id, line)
);
CREATE INDEX procs_proc ON procs (record_id, proc, seq);
CREATE INDEX procs_parent ON procs (record_id, tree_parent);
CREATE INDEX procs_exe ON procs (exe);
CREATE INDEX procs_digest ON procs (digest);
