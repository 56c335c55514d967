-- CreateTable
CREATE TABLE "token_uses" (
    "counter" CHAR(64) NOT NULL,
    "token_id" CHAR(32) NOT NULL,
    "uses" INTEGER NOT NULL,
    "max_uses" INTEGER NOT NULL,
    "first_used_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_used_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "token_uses_pkey" PRIMARY KEY ("counter")
);

-- CreateIndex
CREATE INDEX "token_uses_token_id_idx" ON "token_uses"("token_id");

-- A counter never passes its limit and never goes back, whoever writes.
ALTER TABLE "token_uses" ADD CONSTRAINT "token_uses_within_max" CHECK ("uses" >= 1 AND "uses" <= "max_uses");
CREATE FUNCTION "token_uses_forward_only"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.uses < OLD.uses OR NEW.max_uses <> OLD.max_uses OR NEW.token_id <> OLD.token_id THEN
    RAISE EXCEPTION 'token_uses: a use count only moves forward (counter %)', OLD.counter;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER "token_uses_forward_only" BEFORE UPDATE ON "token_uses" FOR EACH ROW EXECUTE FUNCTION "token_uses_forward_only"();
CREATE FUNCTION "token_uses_no_delete"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'token_uses: use counts are never deleted';
END $$;
CREATE TRIGGER "token_uses_no_delete" BEFORE DELETE ON "token_uses" FOR EACH ROW EXECUTE FUNCTION "token_uses_no_delete"();
