-- CreateTable
CREATE TABLE "model_price" (
    "sha256" CHAR(64) NOT NULL,
    "model" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "input_per_mtok" DECIMAL(20,10) NOT NULL,
    "output_per_mtok" DECIMAL(20,10) NOT NULL,
    "cached_per_mtok" DECIMAL(20,10) NOT NULL,
    "price_date" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "model_price_pkey" PRIMARY KEY ("sha256")
);

-- CreateTable
CREATE TABLE "token_spend" (
    "counter" CHAR(64) NOT NULL,
    "token_id" CHAR(32) NOT NULL,
    "unit" TEXT NOT NULL,
    "max" DECIMAL(30,10) NOT NULL,
    "spent" DECIMAL(30,10) NOT NULL DEFAULT 0,
    "reserved" DECIMAL(30,10) NOT NULL DEFAULT 0,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "token_spend_pkey" PRIMARY KEY ("counter")
);

-- CreateIndex
CREATE INDEX "token_spend_token_id_idx" ON "token_spend"("token_id");

-- What a budget counter can hold: a known unit, nothing negative.
ALTER TABLE "token_spend" ADD CONSTRAINT "token_spend_amounts_check"
  CHECK ("unit" IN ('tokens', 'cost') AND "max" >= 0 AND "spent" >= 0 AND "reserved" >= 0);

-- A price an event was charged with never changes or goes away.
CREATE FUNCTION "model_price_refuse_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'model_price is append-only: % refused', TG_OP USING ERRCODE = 'restrict_violation';
END $$;
CREATE TRIGGER "model_price_append_only" BEFORE UPDATE OR DELETE ON "model_price"
  FOR EACH ROW EXECUTE FUNCTION "model_price_refuse_change"();
CREATE TRIGGER "model_price_no_truncate" BEFORE TRUNCATE ON "model_price"
  FOR EACH STATEMENT EXECUTE FUNCTION "model_price_refuse_change"();
