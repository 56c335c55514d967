// Which exchanges the boundary records, by what they touch: every door's request and answer is
// recorded except the Ledger's own reads and the storage layer's own traffic (docs/ARCHITECTURE.md,
// "What is recorded"). One table per transport: HTTP routes by path, GraphQL by root field.
import { Kind, parse, type DocumentNode, type FieldNode, type SelectionSetNode } from 'graphql';
import { LRUCache } from 'lru-cache';

/** What an exchange reads or changes. */
export type Touches =
  /** The Directory or the resolver: what an agent looked for is part of what it did. */
  | 'DIRECTORY'
  /** The runner: a dispatched call (the door records it, the runner its TOOL_CALL and TOOL_RESULT). */
  | 'RUNNER'
  /** Tokens: minting, inspecting, recording or revoking one. Their bytes hold tokens, so they are never stored as
   *  exchanges: a grant and a revocation are GRANT and REVOCATION events of their own, an inspection nothing. */
  | 'AUTHORITY'
  /** Only the Ledger's own records: reviewers' reads, kept fast and unrecorded. */
  | 'LEDGER_READ'
  /** The storage layer's own traffic: collectors' batches, which are events already. */
  | 'LEDGER_STORAGE'
  /** The API describing itself (introspection, __typename). */
  | 'SCHEMA';

const recordedTouches: ReadonlySet<Touches> = new Set(['DIRECTORY', 'RUNNER']);

/** The rule: an exchange is recorded unless all it touches is the Ledger's reads, its storage, tokens, or the schema. */
export const isRecorded = (touches: Iterable<Touches>): boolean => {
  for (const t of touches) if (recordedTouches.has(t)) return true;
  return false;
};

/** Every HTTP route, by its path pattern. The runner's and MCP doors record inside their handlers. */
export const httpRouteTouches = {
  'POST /ledger/batches': 'LEDGER_STORAGE',
  'GET /ledger/blob/:sha256': 'LEDGER_READ',
  'GET /api/ledger/{row,action}/:id, /api/ledger/{counts,snapshot,ask}': 'LEDGER_READ',
  'GET /api/directory': 'DIRECTORY',
  'GET /api/directory/resolve': 'DIRECTORY',
  'POST /mcp': 'RUNNER',
  'POST /api/dispatch': 'RUNNER',
  'POST|GET /api/tools/:name': 'RUNNER',
  'POST /hooks/:name': 'RUNNER',
  'POST /v1/chat/completions|responses|embeddings|messages|messages/count_tokens': 'RUNNER',
  'GET /v1/models': 'DIRECTORY',
  'GET /healthz': 'SCHEMA',
} as const satisfies Record<string, Touches>;

/** Every root field of the GraphQL schema (test/server/recording.test.ts holds this to the schema). */
export const graphqlFieldTouches: Record<string, Touches> = {
  // Query
  action: 'LEDGER_READ',
  ask: 'LEDGER_READ',
  blob: 'LEDGER_READ',
  event: 'LEDGER_READ',
  events: 'LEDGER_READ',
  ledgerCounts: 'LEDGER_READ',
  ledgerSnapshot: 'LEDGER_READ',
  ledgerSpool: 'LEDGER_READ',
  ledgerCheckpoint: 'LEDGER_READ',
  task: 'LEDGER_READ',
  verifyLedger: 'LEDGER_READ',
  verifyLedgerCheckpoint: 'LEDGER_READ',
  directory: 'DIRECTORY',
  directoryIndex: 'DIRECTORY',
  directoryStats: 'DIRECTORY',
  resolve: 'DIRECTORY',
  row: 'DIRECTORY',
  tool: 'DIRECTORY',
  tools: 'DIRECTORY',
  model: 'DIRECTORY',
  models: 'DIRECTORY',
  inspectToken: 'AUTHORITY',
  // What node(id:) touches is the type its global id names (nodeTypeTouches); an id not known before it runs (not given, malformed) counts as a Directory read.
  node: 'DIRECTORY',
  // Mutation
  appendBatch: 'LEDGER_STORAGE',
  dispatch: 'RUNNER',
  issueToken: 'AUTHORITY',
  recordGrant: 'AUTHORITY',
  revokeToken: 'AUTHORITY',
  // Subscription
  ledgerEvents: 'LEDGER_READ',
  streamCapture: 'LEDGER_READ',
  // Every type's meta fields
  __typename: 'SCHEMA',
  __schema: 'SCHEMA',
  __type: 'SCHEMA',
};

/** Every type node(id:) refetches (src/graphql/node.ts), by what reading it touches: the same as the root field it is otherwise read by. */
export const nodeTypeTouches: Record<string, Touches> = {
  Tool: 'DIRECTORY',
  Entry: 'DIRECTORY',
  Model: 'DIRECTORY',
  LedgerEvent: 'LEDGER_READ',
  Action: 'LEDGER_READ',
  Blob: 'LEDGER_READ',
  Task: 'LEDGER_READ',
  // Reached through an event's contract: the contract as the Ledger recorded it.
  RecordedContract: 'LEDGER_READ',
};

/** The type a global id names (base64 of "Typename:id", src/graphql/node.ts), when it is one. */
export function typenameOfGlobalId(id: unknown): string | undefined {
  if (typeof id !== 'string' || id.length > 4096) return undefined;
  const text = Buffer.from(id, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  return colon > 0 ? text.slice(0, colon) : undefined;
}

type RootTouches = {
  touches: Touches[];
  /** The answer depends on the variables (a node id given as one), so it is not cached by text alone. */
  byVariables: boolean;
};

/** What an operation's root fields touch (fragments followed); node(id:) by the type its id names. */
function rootTouches(document: DocumentNode, operationName: string | undefined, variables: Record<string, unknown> | undefined): RootTouches {
  const fragments = new Map(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d.selectionSet] as const] : [])));
  const touches: Touches[] = [];
  let byVariables = false;
  const nodeTouches = (field: FieldNode): Touches => {
    const arg = field.arguments?.find((a) => a.name.value === 'id')?.value;
    let id: unknown;
    if (arg?.kind === Kind.STRING) id = arg.value;
    else if (arg?.kind === Kind.VARIABLE) {
      byVariables = true;
      id = variables?.[arg.name.value];
    }
    return nodeTypeTouches[typenameOfGlobalId(id) ?? ''] ?? 'DIRECTORY';
  };
  const seen = new Set<string>();
  const walk = (set: SelectionSetNode) => {
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) touches.push(s.name.value === 'node' ? nodeTouches(s) : (graphqlFieldTouches[s.name.value] ?? 'DIRECTORY'));
      else if (s.kind === Kind.INLINE_FRAGMENT) walk(s.selectionSet);
      else if (!seen.has(s.name.value)) {
        seen.add(s.name.value);
        const fragment = fragments.get(s.name.value);
        if (fragment) walk(fragment);
      }
    }
  };
  for (const d of document.definitions) {
    if (d.kind === Kind.OPERATION_DEFINITION && (!operationName || d.name?.value === operationName)) walk(d.selectionSet);
  }
  return { touches, byVariables };
}

const recordedBy = ({ touches }: RootTouches) => touches.length === 0 || isRecorded(touches);

/** Whether a parsed operation is recorded (graphql-ws, which parses before it executes). */
export function graphqlDocumentRecorded(document: DocumentNode, operationName?: string | null, variables?: Record<string, unknown> | null): boolean {
  return recordedBy(rootTouches(document, operationName ?? undefined, variables ?? undefined));
}

const decisions = new LRUCache<string, boolean>({ max: 1_000 });

/**
 * Whether one GraphQL operation is recorded. An unknown field, or a document that does not parse,
 * is recorded: only what is known to read the Ledger alone goes unrecorded. Cached by text, so a
 * reviewer's repeated read is parsed here once.
 */
export function graphqlOperationRecorded(query: unknown, operationName?: unknown, variables?: unknown): boolean {
  if (typeof query !== 'string') return true;
  const name = typeof operationName === 'string' ? operationName : undefined;
  const key = `${name ?? ''}\u0000${query}`;
  const cached = decisions.get(key);
  if (cached !== undefined) return cached;
  const vars = variables !== null && typeof variables === 'object' && !Array.isArray(variables) ? (variables as Record<string, unknown>) : undefined;
  let found: RootTouches;
  try {
    found = rootTouches(parse(query, { noLocation: true }), name, vars);
  } catch {
    found = { touches: ['DIRECTORY'], byVariables: false };
  }
  const recorded = recordedBy(found);
  if (!found.byVariables) decisions.set(key, recorded);
  return recorded;
}

/** Whether a GraphQL HTTP request (GET params or a JSON body, batched or not) carries an operation that is recorded. */
export function graphqlRequestRecorded(params: unknown): boolean {
  if (Array.isArray(params)) return params.some(graphqlRequestRecorded);
  if (params === null || typeof params !== 'object') return true;
  const { query, operationName, variables } = params as { query?: unknown; operationName?: unknown; variables?: unknown };
  return graphqlOperationRecorded(query, operationName, typeof variables === 'string' ? parsedVariables(variables) : variables);
}

/** A GET request's variables, sent as JSON text; anything else counts as none. */
function parsedVariables(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
