-- TRUNCATE skips row triggers: without this, one statement would reset every token's use count.
CREATE TRIGGER "token_uses_no_truncate" BEFORE TRUNCATE ON "token_uses"
  FOR EACH STATEMENT EXECUTE FUNCTION "token_uses_no_delete"();
