-- CreateTable
CREATE TABLE "token_revocation" (
    "token_id" CHAR(32) NOT NULL,
    "reason" TEXT NOT NULL,
    "revoked_by" TEXT NOT NULL,
    "action_id" TEXT NOT NULL,
    "revoked_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "token_revocation_pkey" PRIMARY KEY ("token_id")
);

-- A revocation is never undone or edited, whoever writes.
CREATE FUNCTION "token_revocation_refuse_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'token_revocation is append-only: % refused', TG_OP USING ERRCODE = 'restrict_violation';
END $$;
CREATE TRIGGER "token_revocation_append_only" BEFORE UPDATE OR DELETE ON "token_revocation"
  FOR EACH ROW EXECUTE FUNCTION "token_revocation_refuse_change"();
CREATE TRIGGER "token_revocation_no_truncate" BEFORE TRUNCATE ON "token_revocation"
  FOR EACH STATEMENT EXECUTE FUNCTION "token_revocation_refuse_change"();

-- Every instance LISTENing hears each revocation when it commits (the Redis channel does this when configured).
CREATE FUNCTION "token_revocation_notify"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('dirledger_token_revocation', NEW."token_id");
  RETURN NULL;
END $$;
CREATE TRIGGER "token_revocation_notify" AFTER INSERT ON "token_revocation"
  FOR EACH ROW EXECUTE FUNCTION "token_revocation_notify"();
