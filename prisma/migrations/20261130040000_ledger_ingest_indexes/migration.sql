-- Ingest cost (issue 2): every index and CHECK on ledger_event is paid per appended row, under the
-- ledger's commit lock. Hand-written; Prisma does not model partial indexes (they are listed as
-- comments on LedgerEvent in schema.prisma).

-- No read looks events up by payload hash, and the RESTRICT foreign key it would serve on a blob
-- delete never runs: blob_append_only refuses every delete first.
DROP INDEX "ledger_event_payload_sha256_position_idx";

-- tool and task are absent on many events (model calls have no tool; most events no task). A filter
-- on either (`tool IN (…)`) implies IS NOT NULL, so the planner still uses these partial indexes,
-- and rows without the value cost nothing to append.
DROP INDEX "ledger_event_tool_position_idx";
CREATE INDEX "ledger_event_tool_position_idx" ON "ledger_event"("tool", "position") WHERE "tool" IS NOT NULL;
DROP INDEX "ledger_event_task_position_idx";
CREATE INDEX "ledger_event_task_position_idx" ON "ledger_event"("task", "position") WHERE "task" IS NOT NULL;

-- payload_sha256 references blob(sha256), whose own CHECK already holds it to 64 lowercase hex
-- digits; testing the regular expression again per event cost ~10 µs of PostgreSQL CPU each.
ALTER TABLE "ledger_event" DROP CONSTRAINT "ledger_event_payload_sha256_hex_check";

-- The same rule for blob.sha256 without a regular expression (about half its CPU): 64 characters
-- (length of char(n) ignores the padding) that are all lowercase hex digits.
ALTER TABLE "blob" DROP CONSTRAINT "blob_sha256_hex_check";
ALTER TABLE "blob" ADD CONSTRAINT "blob_sha256_hex_check" CHECK (length("sha256") = 64 AND ltrim("sha256", '0123456789abcdef') = '');
