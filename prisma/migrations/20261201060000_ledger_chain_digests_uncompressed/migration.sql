-- The hash chain's cost (issue 16): ledger_batch.event_digests is 40 bytes an event (20 KB for 500),
-- mostly SHA-256 output that does not compress, so PostgreSQL's attempt to compress it on every append
-- was wasted work under the commit lock (~0.8 µs of PostgreSQL CPU an event, measured). Stored
-- out of line uncompressed from now on; rows already stored stay as they are. The bytes are unchanged.
ALTER TABLE "ledger_batch" ALTER COLUMN "event_digests" SET STORAGE EXTERNAL;
