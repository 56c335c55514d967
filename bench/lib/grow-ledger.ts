// Grows a loaded ledger to N events in SQL (INSERT … SELECT generate_series), shaped like the ingest
// workload: four kinds in turn, request/response pairs under one action, ten tools on tool events,
// sessions of 400, turns of 8 (every number counted from the event's position, so a second growth
// continues the first), every payload an existing blob (the workload repeats payloads too),
// tool requests naming their tool's contract. Not through the ingest door: this is about how reads
// behave on a big table, and the door would take hours. The append-only and reference triggers are
// off for the load (session_replication_role = replica; every row references a real blob and
// batch), and the secondary indexes are dropped and rebuilt around it, exactly as defined.
import pg from 'pg';

export type GrowOptions = { tools: string[]; contracts: Map<string, string>; chunk?: number; log?: (line: string) => void };

const columns = `id, position, kind, direction, action_id, tool, session, turn, agent, model, status, method, url,
  cost_usd, input_tokens, output_tokens, occurred_at, batch_id, payload_state, payload_sha256, payload_size, payload_encoding,
  contract_form, contract_sha256`;

const rows = `
  SELECT 'g_' || lpad(g::text, 10, '0'),
         g,
         (ARRAY['model.request', 'model.response', 'tool.request', 'tool.response'])[1 + g % 4],
         (CASE WHEN g % 2 = 0 THEN 'OUT' ELSE 'IN' END)::"Direction",
         'gact_' || (g / 2),
         CASE WHEN g % 4 >= 2 THEN ($4::text[])[1 + (g / 4 * 7) % cardinality($4::text[])] END,
         'gses_' || (g / 400),
         'gturn_' || (g / 8),
         (ARRAY['planner', 'researcher', 'writer', 'reviewer', 'ops'])[1 + (g / 400) % 5],
         CASE WHEN g % 4 < 2 THEN (ARRAY['claude-sonnet-4', 'claude-haiku-4', 'gpt-4.1', 'gpt-4.1-mini', 'gemini-2.5-pro', 'llama-3.3-70b'])[1 + (g / 2) % 6] END,
         CASE WHEN g % 2 = 1 THEN (ARRAY['200', '200', '200', '200', '201', '400', '404', '429', '500'])[1 + g % 9] ELSE 'sent' END,
         'POST',
         CASE WHEN g % 4 < 2 THEN 'https://api.example.com/v1/messages' ELSE 'https://tools.example.com/mcp/' || ($4::text[])[1 + (g / 4 * 7) % cardinality($4::text[])] END,
         CASE WHEN g % 4 = 1 THEN ((g % 500000) + 1) / 1e7 END,
         CASE WHEN g % 4 = 1 THEN 200 + g % 19800 END,
         CASE WHEN g % 4 = 1 THEN 20 + g % 3980 END,
         timestamptz '2026-10-01T00:00:00Z' + g * interval '37 milliseconds',
         $6::uuid,
         'COMPLETE'::"PayloadState",
         p.sha256, p.size, p.encoding,
         CASE WHEN g % 4 = 2 THEN 'REST' END,
         CASE WHEN g % 4 = 2 THEN ($5::text[])[1 + (g / 4 * 7) % cardinality($4::text[])] END
  FROM (SELECT $3::bigint + i AS g FROM generate_series($1::bigint, $2::bigint) AS i) AS s
  JOIN bench_blob_pick p ON p.i = (g * 2654435761) % $7::bigint`;

/** Adds events until the ledger holds `total`; returns seconds spent. */
export async function growLedger(url: string, total: number, o: GrowOptions): Promise<number> {
  const t0 = performance.now();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const log = o.log ?? (() => {});
  try {
    const {
      rows: [state],
    } = await client.query<{ n: string; batch: string }>('SELECT count(*) AS n, (SELECT id FROM ledger_batch LIMIT 1) AS batch FROM ledger_event');
    const have = Number(state!.n);
    if (have >= total) return 0;
    await client.query("SET session_replication_role = replica; SET maintenance_work_mem = '512MB'; SET synchronous_commit = off");
    await client.query('CREATE TEMP TABLE bench_blob_pick AS SELECT (row_number() OVER (ORDER BY sha256)) - 1 AS i, sha256, size, encoding FROM blob');
    await client.query('CREATE INDEX ON bench_blob_pick (i)');
    const {
      rows: [picks],
    } = await client.query<{ n: string }>('SELECT count(*) AS n FROM bench_blob_pick');
    const { rows: indexes } = await client.query<{ name: string; def: string }>(
      "SELECT indexname AS name, indexdef AS def FROM pg_indexes WHERE tablename = 'ledger_event' AND indexname <> 'ledger_event_pkey'",
    );
    for (const ix of indexes) await client.query(`DROP INDEX "${ix.name}"`);
    // Positions come from the ledger's own sequence, a block reserved at once, so the server's later appends
    // (its recorded reads) never take a position a generated event holds.
    const {
      rows: [reserved],
    } = await client.query<{ last: string }>("SELECT setval('ledger_position_seq', nextval('ledger_position_seq') + $1::bigint - 1) AS last", [total - have]);
    const firstPosition = BigInt(reserved!.last) - BigInt(total - have) + 1n;
    const shas = o.tools.map((t) => o.contracts.get(t) ?? null);
    const chunk = o.chunk ?? 1_000_000;
    for (let from = 1; from <= total - have; from += chunk) {
      const to = Math.min(total - have, from + chunk - 1);
      await client.query(`INSERT INTO ledger_event (${columns}) ${rows}`, [from, to, String(firstPosition - 1n), o.tools, shas, state!.batch, picks!.n]);
      log(`  generated ${(have + to).toLocaleString('en-US')} events (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
    }
    for (const ix of indexes) await client.query(ix.def);
    // The per-tool counts a trigger keeps on append (the triggers were off for the load), when this schema has them.
    await client.query(`DO $$ BEGIN
      IF to_regclass('ledger_tool_count') IS NOT NULL THEN
        INSERT INTO ledger_tool_count (tool, events) SELECT tool, count(*) FROM ledger_event WHERE tool IS NOT NULL GROUP BY tool
        ON CONFLICT (tool) DO UPDATE SET events = EXCLUDED.events;
      END IF; END $$`);
    log(`  indexes rebuilt (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
    await client.query('VACUUM (ANALYZE) ledger_event');
    log(`  vacuumed and analysed (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
    return (performance.now() - t0) / 1000;
  } finally {
    await client.end();
  }
}
