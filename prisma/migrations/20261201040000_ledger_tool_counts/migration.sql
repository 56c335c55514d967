-- Reviewer reads (issue 17): counting one tool's events read every index entry of that tool, so the
-- answer slowed in step with the ledger (`npm run bench -- reads --grow`). Each tool's count is now
-- kept as events are appended, in the appending transaction, by one statement per INSERT over the
-- rows it added (the ledger is append-only, so a count only ever grows and is exact at every commit).
-- Appends are serialised by the ledger's commit lock, so the counter rows never see two writers.
CREATE TABLE "ledger_tool_count" (
    "tool" TEXT NOT NULL,
    "events" BIGINT NOT NULL,

    CONSTRAINT "ledger_tool_count_pkey" PRIMARY KEY ("tool")
);

CREATE FUNCTION "ledger_tool_count_add"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO ledger_tool_count (tool, events)
  SELECT a.tool, count(*) FROM added a WHERE a.tool IS NOT NULL GROUP BY a.tool ORDER BY a.tool
  ON CONFLICT (tool) DO UPDATE SET events = ledger_tool_count.events + EXCLUDED.events;
  RETURN NULL;
END;
$$;
CREATE TRIGGER "ledger_tool_count_add" AFTER INSERT ON "ledger_event"
  REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION "ledger_tool_count_add"();

INSERT INTO "ledger_tool_count" ("tool", "events")
SELECT "tool", count(*) FROM "ledger_event" WHERE "tool" IS NOT NULL GROUP BY "tool";
