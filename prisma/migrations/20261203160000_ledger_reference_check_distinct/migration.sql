-- Ingest cost (issues 15 and 16): the reference check ran one index lookup per appended row, for the
-- batch (every row of an append names the same one) and for the blob (a batch names many rows'
-- payloads more than once). It runs at the end of the INSERT, so under the commit lock. It now looks
-- up each distinct value once: one batch lookup per statement instead of one per row. The rule, the
-- error code, the constraint names and the message are the same; the event named is the first (by
-- id) of those that hold the missing reference.
CREATE OR REPLACE FUNCTION "ledger_event_check_references"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  missing record;
BEGIN
  SELECT a.id, a.payload_sha256 AS ref INTO missing
  FROM (SELECT min(id) AS id, payload_sha256 FROM added WHERE payload_sha256 IS NOT NULL GROUP BY payload_sha256) a
  WHERE NOT EXISTS (SELECT 1 FROM blob b WHERE b.sha256 = a.payload_sha256)
  LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'ledger_event % references blob %, which is not stored', missing.id, missing.ref
      USING ERRCODE = 'foreign_key_violation', CONSTRAINT = 'ledger_event_payload_sha256_fkey', TABLE = 'ledger_event';
  END IF;
  SELECT a.id, a.batch_id AS ref INTO missing
  FROM (SELECT min(id) AS id, batch_id FROM added GROUP BY batch_id) a
  WHERE NOT EXISTS (SELECT 1 FROM ledger_batch l WHERE l.id = a.batch_id)
  LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'ledger_event % references batch %, which is not recorded', missing.id, missing.ref
      USING ERRCODE = 'foreign_key_violation', CONSTRAINT = 'ledger_event_batch_id_fkey', TABLE = 'ledger_event';
  END IF;
  RETURN NULL;
END;
$$;
