// The reviewer's questions of `npm run bench -- reads`, each asked three ways: of dirledger's GraphQL,
// of PostGraphile's GraphQL over the same database, and as one hand-written SQL statement through
// pg (the floor). Each way's answer is brought to one canonical form, so the run can check that all
// three returned the same data before it times anything.
// The floor's statements hold the tool as the server's do (src/ledger/event-select.ts, `heldTo`), so every
// plan, custom or the generic one a named statement settles on, walks the (tool, position) index. Ordered by
// position alone, the generic plan walked the position index and took 18 s for a rare tool at 10M events.
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { decodeInline } from '../../src/ledger/payload.ts';

/** Values the questions draw from, in turn: recent events, their actions, the tools. */
export type Pools = { eventIds: string[]; contractEventIds: string[]; actionIds: string[]; tools: string[]; sevenTools: string[] };

// Each question's `normalize` and `answer` name the shape their query returns (methods accept a narrower parameter).
type Graph = { query: string; variables(p: Pools, i: number): Record<string, unknown>; normalize(data: unknown): unknown | Promise<unknown> };
type Floor = { text: string; values(p: Pools, i: number): unknown[]; answer(rows: unknown[]): unknown | Promise<unknown> };

type Blob = { size: unknown; sha256: string } | null;
type OurEvent = { id: string; position: string; payload: Blob };
type TheirEvent = { rowId: string; position: string; payload: Blob };
type Edges<T> = { edges: { node: T }[] };
type Nodes<T> = { nodes: T[] };
type EventRow = { id: string; position: string; size: string | null; sha256: string | null };
export type Question = { name: string; short: string; ours: Graph; postgraphile: Graph; floor: Floor };

const at = <T>(list: T[], i: number) => list[i % list.length]!;
const blobOf = (p: { size: unknown; sha256: string } | null) => (p ? { size: String(p.size), sha256: p.sha256 } : null);
const eventOf = (id: string, position: unknown, payload: { size: unknown; sha256: string } | null) => ({
  id,
  position: String(position),
  payload: blobOf(payload),
});
const rowEvent = (r: EventRow) => eventOf(r.id, r.position, r.sha256 ? { size: r.size, sha256: r.sha256 } : null);

async function textOf(codec: string, data: Buffer, sha256: string): Promise<string> {
  const bytes = await decodeInline(codec, data);
  if (createHash('sha256').update(bytes).digest('hex') !== sha256) throw new Error(`blob ${sha256} does not match its hash`);
  return bytes.toString('utf8');
}

const blobFields = 'payload { size sha256 }';

export const questions: Question[] = [
  {
    name: "one event by id with its blob's size and hash",
    short: 'event by id',
    ours: {
      query: `query ($id: ID!) { event(id: $id) { id kind position ${blobFields} } }`,
      variables: (p, i) => ({ id: at(p.eventIds, i) }),
      normalize: (d: { event: OurEvent & { kind: string } }) => ({ ...eventOf(d.event.id, d.event.position, d.event.payload), kind: d.event.kind }),
    },
    postgraphile: {
      query: `query ($id: String!) { ledgerEventByRowId(rowId: $id) { rowId kind position ${blobFields} } }`,
      variables: (p, i) => ({ id: at(p.eventIds, i) }),
      normalize: (d: { ledgerEventByRowId: TheirEvent & { kind: string } }) => ({
        ...eventOf(d.ledgerEventByRowId.rowId, d.ledgerEventByRowId.position, d.ledgerEventByRowId.payload),
        kind: d.ledgerEventByRowId.kind,
      }),
    },
    floor: {
      text: 'SELECT e.id, e.kind, e.position, b.size, b.sha256 FROM ledger_event e LEFT JOIN blob b ON b.sha256 = e.payload_sha256 WHERE e.id = $1',
      values: (p, i) => [at(p.eventIds, i)],
      answer: (rows: (EventRow & { kind: string })[]) => ({ ...rowEvent(rows[0]!), kind: rows[0]!.kind }),
    },
  },
  {
    name: 'latest 50 events of a tool with blob size/hash',
    short: 'latest 50 of a tool',
    ours: {
      query: `query ($tool: String!) { events(filter: { tool: [$tool] }, first: 50, order: DESC) { edges { node { id position ${blobFields} } } } }`,
      variables: (p, i) => ({ tool: at(p.tools, i) }),
      normalize: (d: { events: Edges<OurEvent> }) => d.events.edges.map((e) => eventOf(e.node.id, e.node.position, e.node.payload)),
    },
    postgraphile: {
      query: `query ($tool: String!) { allLedgerEvents(condition: { tool: $tool }, orderBy: POSITION_DESC, first: 50) { nodes { rowId position ${blobFields} } } }`,
      variables: (p, i) => ({ tool: at(p.tools, i) }),
      normalize: (d: { allLedgerEvents: Nodes<TheirEvent> }) => d.allLedgerEvents.nodes.map((n) => eventOf(n.rowId, n.position, n.payload)),
    },
    floor: {
      text: 'SELECT e.id, e.position, b.size, b.sha256 FROM ledger_event e LEFT JOIN blob b ON b.sha256 = e.payload_sha256 WHERE e.tool >= $1 AND e.tool <= $1 ORDER BY e.tool DESC, e.position DESC LIMIT 50',
      values: (p, i) => [at(p.tools, i)],
      answer: (rows: EventRow[]) => rows.map(rowEvent),
    },
  },
  {
    name: 'tool → 20 events → blob',
    short: 'tool → 20 events',
    ours: {
      query: `query ($tool: String!) { tool(name: $tool) { name description events(first: 20) { edges { node { id position ${blobFields} } } } } }`,
      variables: (p, i) => ({ tool: at(p.tools, i) }),
      normalize: (d: { tool: { name: string; description: string; events: Edges<OurEvent> } }) => ({
        name: d.tool.name,
        description: d.tool.description,
        events: d.tool.events.edges.map((e) => eventOf(e.node.id, e.node.position, e.node.payload)),
      }),
    },
    postgraphile: {
      query: `query ($tool: String!) { directoryRowByName(name: $tool) { name description events(orderBy: POSITION_ASC, first: 20) { nodes { rowId position ${blobFields} } } } }`,
      variables: (p, i) => ({ tool: at(p.tools, i) }),
      normalize: (d: { directoryRowByName: { name: string; description: string; events: Nodes<TheirEvent> } }) => ({
        name: d.directoryRowByName.name,
        description: d.directoryRowByName.description,
        events: d.directoryRowByName.events.nodes.map((n) => eventOf(n.rowId, n.position, n.payload)),
      }),
    },
    floor: {
      text:
        'SELECT r.name, r.description, e.id, e.position, b.size, b.sha256 FROM directory_row r LEFT JOIN LATERAL (SELECT * FROM ledger_event e WHERE e.tool >= r.name AND e.tool <= r.name ORDER BY e.tool, e.position LIMIT 20) e ON true ' +
        "LEFT JOIN blob b ON b.sha256 = e.payload_sha256 WHERE r.type = 'tool' AND r.name = $1 ORDER BY e.position",
      values: (p, i) => [at(p.tools, i)],
      // A tool without events is one row with a null event id (the LEFT JOIN).
      answer: (rows: (Omit<EventRow, 'id'> & { id: string | null; name: string; description: string })[]) => ({
        name: rows[0]!.name,
        description: rows[0]!.description,
        events: rows.filter((r): r is EventRow & { name: string; description: string } => Boolean(r.id)).map(rowEvent),
      }),
    },
  },
  {
    name: '7 tools → 10 events each → blob',
    short: '7 tools → 10 events',
    ours: {
      query: `query ($names: [String!]!) { tools(names: $names) { name events(first: 10) { edges { node { id position ${blobFields} } } } } }`,
      variables: (p) => ({ names: p.sevenTools }),
      normalize: (d: { tools: { name: string; events: Edges<OurEvent> }[] }) =>
        d.tools.map((t) => ({ name: t.name, events: t.events.edges.map((e) => eventOf(e.node.id, e.node.position, e.node.payload)) })),
    },
    postgraphile: {
      query: `{ allDirectoryRows(condition: { type: "tool" }, orderBy: NAME_ASC, first: 7) { nodes { name events(orderBy: POSITION_ASC, first: 10) { nodes { rowId position ${blobFields} } } } } }`,
      variables: () => ({}),
      normalize: (d: { allDirectoryRows: Nodes<{ name: string; events: Nodes<TheirEvent> }> }) =>
        d.allDirectoryRows.nodes.map((t) => ({ name: t.name, events: t.events.nodes.map((n) => eventOf(n.rowId, n.position, n.payload)) })),
    },
    floor: {
      text:
        'SELECT t.name, e.id, e.position, b.size, b.sha256 FROM unnest($1::text[]) WITH ORDINALITY AS t(name, n) CROSS JOIN LATERAL (SELECT * FROM ledger_event e WHERE e.tool >= t.name AND e.tool <= t.name ORDER BY e.tool, e.position LIMIT 10) e ' +
        'LEFT JOIN blob b ON b.sha256 = e.payload_sha256 ORDER BY t.n, e.position',
      values: (p) => [p.sevenTools],
      answer: (rows: (EventRow & { name: string })[]) => {
        const out: { name: string; events: unknown[] }[] = [];
        for (const r of rows) {
          if (out.at(-1)?.name !== r.name) out.push({ name: r.name, events: [] });
          out.at(-1)!.events.push(rowEvent(r));
        }
        return out;
      },
    },
  },
  {
    name: "count of one tool's events",
    short: "a tool's count",
    ours: {
      query: `query ($tool: String!) { ledgerCounts(by: TOOL, filter: { tool: [$tool] }) { key events } }`,
      variables: (p, i) => ({ tool: at(p.tools, i) }),
      normalize: (d: { ledgerCounts: { key: string; events: number }[] }) => d.ledgerCounts[0]?.events ?? 0,
    },
    postgraphile: {
      query: `query ($tool: String!) { allLedgerEvents(condition: { tool: $tool }) { totalCount } }`,
      variables: (p, i) => ({ tool: at(p.tools, i) }),
      normalize: (d: { allLedgerEvents: { totalCount: number } }) => d.allLedgerEvents.totalCount,
    },
    floor: {
      text: 'SELECT count(*)::int AS n FROM ledger_event WHERE tool = $1',
      values: (p, i) => [at(p.tools, i)],
      answer: (rows: { n: number }[]) => rows[0]!.n,
    },
  },
  {
    name: 'event → contract',
    short: 'event → contract',
    ours: {
      query: `query ($id: ID!) { event(id: $id) { id contract { form sha256 shape json } } }`,
      variables: (p, i) => ({ id: at(p.contractEventIds, i) }),
      normalize: (d: { event: { id: string; contract: { form: string; sha256: string; shape: string; json: unknown } | null } }) => ({
        id: d.event.id,
        ...d.event.contract,
      }),
    },
    postgraphile: {
      query: `query ($id: String!) { ledgerEventByRowId(rowId: $id) { rowId contractForm contractSha256 contractVersion { shape contract } } }`,
      variables: (p, i) => ({ id: at(p.contractEventIds, i) }),
      normalize: (d: {
        ledgerEventByRowId: { rowId: string; contractForm: string; contractSha256: string; contractVersion: { shape: string; contract: unknown } };
      }) => {
        const e = d.ledgerEventByRowId;
        return { id: e.rowId, form: e.contractForm, sha256: e.contractSha256, shape: e.contractVersion.shape, json: e.contractVersion.contract };
      },
    },
    floor: {
      text: 'SELECT e.id, e.contract_form, e.contract_sha256, c.shape, c.contract FROM ledger_event e LEFT JOIN contract_version c ON c.sha256 = e.contract_sha256 WHERE e.id = $1',
      values: (p, i) => [at(p.contractEventIds, i)],
      answer: (rows: { id: string; contract_form: string; contract_sha256: string; shape: string; contract: unknown }[]) => {
        const r = rows[0]!;
        return { id: r.id, form: r.contract_form, sha256: r.contract_sha256, shape: r.shape, json: r.contract };
      },
    },
  },
  {
    name: 'action → events with payload text',
    short: 'action → payload text',
    ours: {
      query: `query ($id: ID!) { action(id: $id) { id events { id kind payload { text } } } }`,
      variables: (p, i) => ({ id: at(p.actionIds, i) }),
      normalize: (d: { action: { events: { id: string; kind: string; payload: { text: string | null } | null }[] } }) =>
        d.action.events.map((e) => ({ id: e.id, kind: e.kind, text: e.payload?.text ?? null })),
    },
    postgraphile: {
      // PostGraphile returns the stored (compressed) bytes; decoding them here is for the check only, not timed.
      query: `query ($id: String!) { allLedgerEvents(condition: { actionId: $id }, orderBy: POSITION_ASC) { nodes { rowId kind payload { sha256 codec data } } } }`,
      variables: (p, i) => ({ id: at(p.actionIds, i) }),
      normalize: (d: { allLedgerEvents: Nodes<{ rowId: string; kind: string; payload: { sha256: string; codec: string; data: string } | null }> }) =>
        Promise.all(
          d.allLedgerEvents.nodes.map(async (n) => ({
            id: n.rowId,
            kind: n.kind,
            text: n.payload ? await textOf(n.payload.codec, Buffer.from(n.payload.data, 'base64'), n.payload.sha256) : null,
          })),
        ),
    },
    floor: {
      text: 'SELECT e.id, e.kind, b.sha256, b.codec, b.data FROM ledger_event e LEFT JOIN blob b ON b.sha256 = e.payload_sha256 WHERE e.action_id = $1 ORDER BY e.position',
      values: (p, i) => [at(p.actionIds, i)],
      answer: (rows: { id: string; kind: string; sha256: string | null; codec: string; data: Buffer }[]) =>
        Promise.all(rows.map(async (r) => ({ id: r.id, kind: r.kind, text: r.sha256 ? await textOf(r.codec, r.data, r.sha256) : null }))),
    },
  },
];

/** Runs a question's floor statement as a named statement (prepared once per connection). */
export async function askFloor(pool: pg.Pool, q: Question, index: number, pools: Pools, i: number): Promise<unknown> {
  const { rows } = await pool.query({ name: `floor_${index}`, text: q.floor.text, values: q.floor.values(pools, i) });
  return q.floor.answer(rows);
}
