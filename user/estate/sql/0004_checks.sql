-- SPDX-License-Identifier: Apache-2.0
-- kwitness estate database, migration 4: what `kwitness estate verify`
-- found when it re-derived a stored session from its entries, its signed
-- record and its policy (ok 1), or why it does not hold (ok 0: the row was
-- changed after ingest; query and report show it as tampered). Written
-- with administrator credentials only (docs/estate.md, "Who can write").
CREATE TABLE record_checks (
	record_id   BIGINT PRIMARY KEY REFERENCES records (id),
	ok          INTEGER NOT NULL,
	why         TEXT NOT NULL,
	checked_at  BIGINT NOT NULL
);
-- A record's row is inserted last, after its entries, in one transaction
-- (a pushing host may insert, never update): the entries' reference to it
-- is checked at commit.
@DEFER_ENTRIES_FK@
