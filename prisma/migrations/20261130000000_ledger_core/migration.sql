-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateEnum
CREATE TYPE "Direction" AS ENUM ('IN', 'OUT');

-- CreateEnum
CREATE TYPE "PayloadState" AS ENUM ('COMPLETE', 'PARTIAL', 'NONE', 'ARTIFACT', 'MISSING');

-- CreateEnum
CREATE TYPE "PayloadEncoding" AS ENUM ('UTF8', 'BINARY');

-- CreateEnum
CREATE TYPE "BlobStorage" AS ENUM ('INLINE', 'OBJECT');

-- CreateTable
CREATE TABLE "ledger_event" (
    "id" TEXT NOT NULL,
    "position" BIGINT NOT NULL,
    "kind" TEXT NOT NULL,
    "direction" "Direction" NOT NULL,
    "action_id" TEXT NOT NULL,
    "tool" TEXT,
    "session" TEXT,
    "turn" TEXT,
    "task" TEXT,
    "agent" TEXT,
    "model" TEXT,
    "status" TEXT,
    "method" TEXT,
    "url" TEXT,
    "headers" JSONB,
    "cost_usd" DECIMAL(20,10),
    "input_tokens" INTEGER,
    "output_tokens" INTEGER,
    "occurred_at" TIMESTAMPTZ(3) NOT NULL,
    "recorded_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "batch_id" UUID NOT NULL,
    "payload_state" "PayloadState" NOT NULL,
    "payload_sha256" CHAR(64),
    "payload_size" BIGINT,
    "payload_encoding" "PayloadEncoding",
    "artifact_uri" TEXT,
    "artifact_sha256" CHAR(64),
    "redacted_secrets" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "metadata" JSONB,

    CONSTRAINT "ledger_event_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "blob" (
    "sha256" CHAR(64) NOT NULL,
    "size" BIGINT NOT NULL,
    "encoding" "PayloadEncoding" NOT NULL,
    "storage" "BlobStorage" NOT NULL,
    "codec" TEXT NOT NULL,
    "stored_size" BIGINT NOT NULL,
    "data" BYTEA,
    "object_key" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "blob_pkey" PRIMARY KEY ("sha256")
);

-- CreateTable
CREATE TABLE "ledger_batch" (
    "id" UUID NOT NULL,
    "collector" TEXT NOT NULL,
    "position" BIGINT,
    "received" INTEGER NOT NULL,
    "inserted" INTEGER NOT NULL,
    "duplicates" INTEGER NOT NULL,
    "bytes" BIGINT NOT NULL,
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ledger_batch_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "collector" (
    "id" TEXT NOT NULL,
    "delivered_position" BIGINT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "collector_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "ledger_event_position_key" ON "ledger_event"("position");

-- CreateIndex
CREATE INDEX "ledger_event_action_id_position_idx" ON "ledger_event"("action_id", "position");

-- CreateIndex
CREATE INDEX "ledger_event_tool_position_idx" ON "ledger_event"("tool", "position");

-- CreateIndex
CREATE INDEX "ledger_event_session_position_idx" ON "ledger_event"("session", "position");

-- CreateIndex
CREATE INDEX "ledger_event_task_position_idx" ON "ledger_event"("task", "position");

-- CreateIndex
CREATE INDEX "ledger_event_kind_position_idx" ON "ledger_event"("kind", "position");

-- CreateIndex
CREATE INDEX "ledger_event_occurred_at_idx" ON "ledger_event"("occurred_at");

-- CreateIndex
CREATE INDEX "ledger_event_payload_sha256_position_idx" ON "ledger_event"("payload_sha256", "position");

-- CreateIndex
CREATE INDEX "ledger_batch_collector_received_at_idx" ON "ledger_batch"("collector", "received_at");

-- AddForeignKey
ALTER TABLE "ledger_event" ADD CONSTRAINT "ledger_event_batch_id_fkey" FOREIGN KEY ("batch_id") REFERENCES "ledger_batch"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "ledger_event" ADD CONSTRAINT "ledger_event_payload_sha256_fkey" FOREIGN KEY ("payload_sha256") REFERENCES "blob"("sha256") ON DELETE RESTRICT ON UPDATE RESTRICT;


-- Constraints Prisma cannot express.

-- Commit-ordered positions: append() takes nextval() only while holding the
-- ledger's commit lock (pg_advisory_xact_lock), so positions increase in commit order.
CREATE SEQUENCE "ledger_position_seq" AS BIGINT START WITH 1 OWNED BY "ledger_event"."position";

-- A row cannot claim a payload it does not have.
ALTER TABLE "ledger_event" ADD CONSTRAINT "ledger_event_payload_state_check" CHECK (
  CASE "payload_state"
    WHEN 'COMPLETE' THEN "payload_sha256" IS NOT NULL AND "payload_size" IS NOT NULL AND "payload_encoding" IS NOT NULL
    WHEN 'PARTIAL'  THEN "payload_sha256" IS NOT NULL AND "payload_size" IS NOT NULL AND "payload_encoding" IS NOT NULL
    WHEN 'ARTIFACT' THEN "payload_sha256" IS NULL AND "artifact_uri" IS NOT NULL
    ELSE "payload_sha256" IS NULL AND "artifact_uri" IS NULL AND "artifact_sha256" IS NULL
  END
);
ALTER TABLE "ledger_event" ADD CONSTRAINT "ledger_event_payload_sha256_hex_check" CHECK ("payload_sha256" ~ '^[0-9a-f]{64}$');
ALTER TABLE "ledger_event" ADD CONSTRAINT "ledger_event_tokens_check" CHECK (coalesce("input_tokens", 0) >= 0 AND coalesce("output_tokens", 0) >= 0);
ALTER TABLE "ledger_event" ALTER COLUMN "redacted_secrets" SET NOT NULL;

ALTER TABLE "blob" ADD CONSTRAINT "blob_sha256_hex_check" CHECK ("sha256" ~ '^[0-9a-f]{64}$');
ALTER TABLE "blob" ADD CONSTRAINT "blob_storage_check" CHECK (
  CASE "storage"
    WHEN 'INLINE' THEN "data" IS NOT NULL AND "object_key" IS NULL
    ELSE "data" IS NULL AND "object_key" IS NOT NULL
  END
);
ALTER TABLE "blob" ADD CONSTRAINT "blob_size_check" CHECK ("size" >= 0 AND "stored_size" >= 0);

-- Append-only, whatever client issues the statement.
CREATE FUNCTION "ledger_refuse_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP
    USING ERRCODE = 'insufficient_privilege', HINT = 'The ledger only grows; append a new event instead.';
END;
$$;
CREATE TRIGGER "ledger_event_append_only" BEFORE UPDATE OR DELETE ON "ledger_event"
  FOR EACH ROW EXECUTE FUNCTION "ledger_refuse_change"();
CREATE TRIGGER "ledger_event_no_truncate" BEFORE TRUNCATE ON "ledger_event"
  FOR EACH STATEMENT EXECUTE FUNCTION "ledger_refuse_change"();
CREATE TRIGGER "blob_append_only" BEFORE UPDATE OR DELETE ON "blob"
  FOR EACH ROW EXECUTE FUNCTION "ledger_refuse_change"();
CREATE TRIGGER "blob_no_truncate" BEFORE TRUNCATE ON "blob"
  FOR EACH STATEMENT EXECUTE FUNCTION "ledger_refuse_change"();

-- A collector's delivered position never moves backwards.
CREATE FUNCTION "collector_refuse_rewind"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW."delivered_position" < OLD."delivered_position" THEN
    RAISE EXCEPTION 'collector % delivered position cannot move backwards (from % to %)',
      OLD."id", OLD."delivered_position", NEW."delivered_position" USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER "collector_no_rewind" BEFORE UPDATE ON "collector"
  FOR EACH ROW EXECUTE FUNCTION "collector_refuse_rewind"();
