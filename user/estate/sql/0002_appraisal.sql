-- SPDX-License-Identifier: Apache-2.0
-- kwitness estate database, migration 2: what the TPM appraisal of a record
-- said. level is 1 only when every step of `kwitness verify --evidence`
-- held at ingest; otherwise appraisal says why the record is Level 0 ('' for
-- a software-only record, which has no evidence to appraise).
ALTER TABLE records ADD COLUMN appraisal TEXT NOT NULL DEFAULT '';
