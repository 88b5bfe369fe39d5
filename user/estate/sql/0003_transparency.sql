-- SPDX-License-Identifier: Apache-2.0
-- kwitness estate database, migration 3: where a record was logged and the
-- TRACE level it reached (kwitness/level.h). level becomes the level's
-- number (0, 1 or 2) and trace_level its name ('Level 0', 'Level 0, logged',
-- 'Level 1', 'Level 2'), as `kwitness verify --transparency` reports them.
-- The log_ and checkpoint_ columns hold what a proof that passed every
-- step of that check says: the log's origin, the record's leaf index, and
-- the cosigned checkpoint it was proven against (its size, its root hash in
-- base64 as the checkpoint writes it, its whole signed note). They are
-- NULL or '' when the record was not proven logged; transparency then says
-- why ('' for a record that names no transparency log).
ALTER TABLE records ADD COLUMN trace_level TEXT NOT NULL DEFAULT '';
UPDATE records SET trace_level = CASE WHEN level = 1 THEN 'Level 1' ELSE 'Level 0' END;
ALTER TABLE records ADD COLUMN transparency TEXT NOT NULL DEFAULT '';
ALTER TABLE records ADD COLUMN log_origin TEXT NOT NULL DEFAULT '';
ALTER TABLE records ADD COLUMN log_index BIGINT;
ALTER TABLE records ADD COLUMN checkpoint_size BIGINT;
ALTER TABLE records ADD COLUMN checkpoint_root TEXT NOT NULL DEFAULT '';
ALTER TABLE records ADD COLUMN checkpoint TEXT NOT NULL DEFAULT '';
CREATE INDEX records_log ON records (log_origin, log_index);
CREATE INDEX records_trace_level ON records (trace_level);
