-- Blob.events walks from a payload to every event that references it (the reviewer's path from
-- bytes back to calls); without an index that is a scan of the whole ledger. Partial: events without
-- a payload cost nothing to append.
CREATE INDEX "ledger_event_payload_sha256_position_idx" ON "ledger_event"("payload_sha256", "position") WHERE "payload_sha256" IS NOT NULL;
