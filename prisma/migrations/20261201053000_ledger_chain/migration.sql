-- Tamper evidence (issue 16): every batch row appended from here on carries a SHA-256 chain link over
-- the previous link, its own columns and the canonical bytes of its events (docs/ARCHITECTURE.md,
-- "Tamper evidence" defines the bytes). Batches and events stored before this migration are not
-- chained: the chain begins at the first new batch, and ledger_chain.genesis_position says where.

-- AlterTable
ALTER TABLE "ledger_batch" ADD COLUMN     "chain_link" BYTEA,
ADD COLUMN     "chain_seq" BIGINT,
ADD COLUMN     "column_sums" BIGINT[],
ADD COLUMN     "event_digests" BYTEA;

-- CreateTable
CREATE TABLE "ledger_chain" (
    "id" BOOLEAN NOT NULL DEFAULT true,
    "seq" BIGINT NOT NULL,
    "link" BYTEA NOT NULL,
    "genesis_position" BIGINT NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ledger_chain_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "ledger_batch_chain_seq_key" ON "ledger_batch"("chain_seq");

-- Hand-written: what Prisma cannot express.

-- One row. Its link before the first chained batch is SHA-256("dirledger-chain-v1").
ALTER TABLE "ledger_chain" ADD CONSTRAINT "ledger_chain_one_row" CHECK ("id");
ALTER TABLE "ledger_chain" ADD CONSTRAINT "ledger_chain_link_length" CHECK (octet_length("link") = 32);
INSERT INTO "ledger_chain" ("id", "seq", "link", "genesis_position")
SELECT true, 0, sha256(convert_to('dirledger-chain-v1', 'UTF8')), coalesce(max("position"), 0) FROM "ledger_event";

-- The head only moves one batch forward at a time, and is never removed.
CREATE FUNCTION "ledger_chain_forward_only"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.seq <> OLD.seq + 1 OR NEW.genesis_position <> OLD.genesis_position OR NEW.started_at <> OLD.started_at THEN
    RAISE EXCEPTION 'ledger_chain: the head moves one batch forward at a time (from % to %)', OLD.seq, NEW.seq
      USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER "ledger_chain_forward_only" BEFORE UPDATE ON "ledger_chain"
  FOR EACH ROW EXECUTE FUNCTION "ledger_chain_forward_only"();
CREATE TRIGGER "ledger_chain_no_delete" BEFORE DELETE ON "ledger_chain"
  FOR EACH ROW EXECUTE FUNCTION "ledger_refuse_change"();
CREATE TRIGGER "ledger_chain_no_truncate" BEFORE TRUNCATE ON "ledger_chain"
  FOR EACH STATEMENT EXECUTE FUNCTION "ledger_refuse_change"();

-- Least privilege (issue 16): a collector's row is never deleted, so its position cannot be rewound
-- by deleting and inserting it again (collector_no_rewind already refuses moving it backwards).
CREATE TRIGGER "collector_no_delete" BEFORE DELETE ON "collector"
  FOR EACH ROW EXECUTE FUNCTION "ledger_refuse_change"();
CREATE TRIGGER "collector_no_truncate" BEFORE TRUNCATE ON "collector"
  FOR EACH STATEMENT EXECUTE FUNCTION "ledger_refuse_change"();
