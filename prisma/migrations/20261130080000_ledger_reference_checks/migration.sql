-- Ingest cost (issue 2): the two foreign keys of ledger_event ran one lookup-and-lock query per
-- appended row (an RI trigger: SELECT … FOR KEY SHARE on the blob and on the batch row), about
-- 16 µs of PostgreSQL CPU per event, plus a WAL record for each already-stored blob it locked.
-- The same two rules are now checked once per INSERT statement over the rows it added.
--
-- The row lock only protected a referenced row from being deleted or re-keyed before commit.
-- Blobs are append-only (blob_append_only, blob_no_truncate), and so is ledger_batch from here on,
-- so a reference that holds when its event is inserted holds for ever.
--
-- Prisma still models the relations (LedgerEvent.payload, LedgerEvent.batch); `dirledger
-- migration-diff` leaves these two constraints out (src/db/schema-engine.ts).
ALTER TABLE "ledger_event" DROP CONSTRAINT "ledger_event_payload_sha256_fkey";
ALTER TABLE "ledger_event" DROP CONSTRAINT "ledger_event_batch_id_fkey";

CREATE TRIGGER "ledger_batch_append_only" BEFORE UPDATE OR DELETE ON "ledger_batch"
  FOR EACH ROW EXECUTE FUNCTION "ledger_refuse_change"();
CREATE TRIGGER "ledger_batch_no_truncate" BEFORE TRUNCATE ON "ledger_batch"
  FOR EACH STATEMENT EXECUTE FUNCTION "ledger_refuse_change"();

-- Same error code and constraint names as the foreign keys it replaces.
CREATE FUNCTION "ledger_event_check_references"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  missing record;
BEGIN
  SELECT a.id, a.payload_sha256 AS ref INTO missing FROM added a
  WHERE a.payload_sha256 IS NOT NULL AND NOT EXISTS (SELECT 1 FROM blob b WHERE b.sha256 = a.payload_sha256)
  LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'ledger_event % references blob %, which is not stored', missing.id, missing.ref
      USING ERRCODE = 'foreign_key_violation', CONSTRAINT = 'ledger_event_payload_sha256_fkey', TABLE = 'ledger_event';
  END IF;
  SELECT a.id, a.batch_id AS ref INTO missing FROM added a
  WHERE NOT EXISTS (SELECT 1 FROM ledger_batch l WHERE l.id = a.batch_id)
  LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'ledger_event % references batch %, which is not recorded', missing.id, missing.ref
      USING ERRCODE = 'foreign_key_violation', CONSTRAINT = 'ledger_event_batch_id_fkey', TABLE = 'ledger_event';
  END IF;
  RETURN NULL;
END;
$$;
CREATE TRIGGER "ledger_event_references" AFTER INSERT ON "ledger_event"
  REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION "ledger_event_check_references"();
