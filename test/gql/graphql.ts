/* eslint-disable */
/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';
/** A collector's batch: appended in one transaction, or not at all. */
export type AppendBatchInput = {
  /** The collector sending the batch (its name); a `collector` caveat must allow it. */
  collector: string;
  /** The events, appended in this order in one transaction (positions follow it). */
  events: Array<LedgerEventInput>;
  /** The collector's delivered position after this batch. */
  position?: string | null | undefined;
};

/** Where a blob's bytes are kept. */
export type BlobStorage =
  /** Compressed in PostgreSQL. */
  | 'INLINE'
  /** In the object store (a folder or S3-compatible storage). */
  | 'OBJECT';

/** The forms the contract writer renders from the canonical call {"tool": NAME, "args": {...}}. UPSTREAM only for rows that wrap an outside service; LINK_URL, LINK_REST and LINK_MCP only with a live scoped token, which they carry. */
export type ContractForm =
  /** The settings of an Apple Shortcuts "Get Contents of URL" action for POST /api/tools/NAME. */
  | 'APPLE_SHORTCUT'
  /** A `dirledger call` command line against this server. */
  | 'CLI'
  /** A curl command line for POST /api/tools/NAME. */
  | 'CURL'
  /** POST /api/dispatch with the canonical call. */
  | 'DISPATCH'
  /** POST /api/dispatch with dryRun: true: rendered and checked, not sent. */
  | 'DRY_RUN'
  /** A Go net/http program calling POST /api/dispatch. */
  | 'GO'
  /** The dispatch mutation, sent to /graphql over HTTP. */
  | 'GRAPHQL_HTTP'
  /** The dispatch mutation on /graphql, answered as Server-Sent Events. */
  | 'GRAPHQL_SSE'
  /** A JavaScript snippet sending the dispatch mutation over graphql-ws. */
  | 'GRAPHQL_WS'
  /** An HTTPie command line for POST /api/tools/NAME. */
  | 'HTTPIE'
  /** A TypeScript line calling this server's dispatcher in process; it needs no token. */
  | 'IN_PROCESS'
  /** A JavaScript fetch of POST /api/dispatch. */
  | 'JAVASCRIPT'
  /** An mcpServers config for /mcp?token=…, which carries the token. */
  | 'LINK_MCP'
  /** POST /api/tools/NAME?token=…: a curl line with no Authorization header. */
  | 'LINK_REST'
  /** GET /api/tools/NAME with the args and the token in the URL: one line, nothing else needed. */
  | 'LINK_URL'
  /** A `claude mcp add` command and an mcpServers config for /mcp, then the tool to call. */
  | 'MCP_CLIENT_CONFIG'
  /** An MCP tools/call on /mcp (streamable HTTP). */
  | 'MCP_HTTP'
  /** An MCP tools/call to `dirledger mcp` over stdio. */
  | 'MCP_STDIO'
  /** A `dirledger call` command line run through npx, with nothing installed. */
  | 'NPX'
  /** A PowerShell Invoke-RestMethod for POST /api/tools/NAME. */
  | 'POWERSHELL'
  /** A Python urllib request to POST /api/dispatch. */
  | 'PYTHON'
  /** POST /api/tools/NAME with the args as the JSON body. */
  | 'REST'
  /** A call through the dirledger/client package (client.tools.NAME). */
  | 'SDK'
  /** POST /api/dispatch with accept: text/event-stream: the result as Server-Sent Events. */
  | 'SSE'
  /** A `dirledger call` command line run on the server host over ssh. */
  | 'SSH'
  /** A TypeScript fetch of the typed dispatch mutation on /graphql (codegen from schema.graphql). */
  | 'TYPESCRIPT'
  /** The outside service's own contract, called directly with its own secrets. */
  | 'UPSTREAM'
  /** GET /api/tools/NAME with the args in the query string. */
  | 'URL'
  /** POST /hooks/NAME with the args as the JSON body. */
  | 'WEBHOOK'
  /** A JavaScript snippet calling over WS /api/ws, the token in its first message. */
  | 'WEBSOCKET';

/** Which contract ran: its form (or way column) and the SHA-256 of its canonical JSON. */
export type ContractIdentityInput = {
  /** A ContractForm name, or the way column (e.g. "way: http"). */
  form: string;
  /** SHA-256 of the contract's canonical JSON, lowercase hex. */
  sha256: string;
};

/** IN: arrived at this system. OUT: sent by it. */
export type Direction =
  /** Arrived at this system. */
  | 'IN'
  /** Sent by this system. */
  | 'OUT';

/** Which part of a LedgerAnswer answers the question. */
export type LedgerAnswerKind =
  /** The question grouped: see counts. */
  | 'COUNTS'
  /** The question asked for events: see events. */
  | 'EVENTS'
  /** The question measured without grouping: see total. */
  | 'TOTAL';

/** One event as a collector sends it; the id makes a resend harmless (a known id is a duplicate). */
export type LedgerEventInput = {
  /** The request this event belongs to: every event of one call shares it. */
  actionId: string;
  /** The agent that acted. */
  agent?: string | null | undefined;
  /** The Directory contract this event ran. */
  contract?: ContractIdentityInput | null | undefined;
  /** Cost in US dollars, exact to 10 decimal places. */
  costUsd?: string | null | undefined;
  /** IN: arrived at the system that recorded it; OUT: sent by it. */
  direction: Direction;
  /** HTTP headers as a JSON object of name → value; secrets are replaced by their names before storing. */
  headers?: unknown;
  /** The source's own stable event id. */
  id: string;
  /** Input tokens the provider counted. */
  inputTokens?: number | null | undefined;
  /** What happened (REQUEST, RESPONSE, TOOL_CALL, TOOL_RESULT, MODEL_CALL, MODEL_RESULT…): 1 to 64 characters. */
  kind: string;
  /** Anything else, as a JSON object (stored as JSON, secrets redacted). */
  metadata?: unknown;
  /** The HTTP method, or CLI/MCP/CODE for other calls. */
  method?: string | null | undefined;
  /** The model named (model traffic). */
  model?: string | null | undefined;
  /** When it happened, as the source saw it (stored to the millisecond, UTC). */
  occurredAt: string;
  /** Output tokens the provider counted. */
  outputTokens?: number | null | undefined;
  /** The body's bytes and their state; omitted: the event has no body (NONE). */
  payload?: PayloadInput | null | undefined;
  /** The session it belongs to. */
  session?: string | null | undefined;
  /** The answer's status: HTTP status, exit code, or a door's own. */
  status?: string | null | undefined;
  /** The task it was done for. */
  task?: string | null | undefined;
  /** The Directory row's name it concerns; a `tools` caveat on the ingest token must allow it. */
  tool?: string | null | undefined;
  /** The turn within its session. */
  turn?: string | null | undefined;
  /** The URL called or served (secrets redacted before storing). */
  url?: string | null | undefined;
};

/** Every field is optional and the fields are combined with AND. A list matches any of its values (one value may be sent without brackets); values match exactly. occurredFrom is inclusive, occurredTo exclusive. */
export type LedgerFilter = {
  /** Events of these agents. */
  agent?: Array<string> | null | undefined;
  /** Events of these directions. */
  direction?: Array<Direction> | null | undefined;
  /** Events of these kinds (e.g. TOOL_CALL, REFUSAL). */
  kind?: Array<string> | null | undefined;
  /** Events naming these models. */
  model?: Array<string> | null | undefined;
  /** Events that occurred at or after this instant. */
  occurredFrom?: string | null | undefined;
  /** Events that occurred before this instant. */
  occurredTo?: string | null | undefined;
  /** Events of these sessions. */
  session?: Array<string> | null | undefined;
  /** Events with these statuses (as text: "200", "0", "OK"). */
  status?: Array<string> | null | undefined;
  /** Events of these tasks. */
  task?: Array<string> | null | undefined;
  /** Events naming these tools. */
  tool?: Array<string> | null | undefined;
  /** Events of these turns. */
  turn?: Array<string> | null | undefined;
};

/** HOUR and DAY group by when the event occurred (UTC); the rest by that column. */
export type LedgerGrouping =
  /** The agent that acted. */
  | 'AGENT'
  /** The day the event occurred on (UTC); the key is its start as an ISO timestamp. */
  | 'DAY'
  /** The hour the event occurred in (UTC); the key is its start as an ISO timestamp. */
  | 'HOUR'
  /** What happened: REQUEST, TOOL_CALL, MODEL_RESULT, REFUSAL… */
  | 'KIND'
  /** The model named (model traffic). */
  | 'MODEL'
  /** The session, as the caller named it. */
  | 'SESSION'
  /** The answer's status: HTTP status, exit code, or a door's own. */
  | 'STATUS'
  /** The task it was done for. */
  | 'TASK'
  /** The tool the event concerns. */
  | 'TOOL'
  /** The turn, by its name alone (the same turn name in two sessions is one group). */
  | 'TURN';

/** What a question asked to be measured: the number of events, their cost, or their tokens. */
export type LedgerMeasure =
  /** Their cost in USD, an exact decimal. */
  | 'COST'
  /** The number of events. */
  | 'EVENTS'
  /** Their input and output tokens. */
  | 'TOKENS';

/** Position order: ASC oldest commit first (the default), DESC newest first. */
export type LedgerOrder =
  /** Oldest commit first (the default). */
  | 'ASC'
  /** Newest commit first. */
  | 'DESC';

/** UTF8 only when strict decoding gives back the identical bytes. */
export type PayloadEncoding =
  /** Anything else: read the bytes as base64. */
  | 'BINARY'
  /** Text: strict UTF-8 decoding gives back the identical bytes. */
  | 'UTF8';

/** The bytes of an event, as UTF-8 text or base64, with their declared state. */
export type PayloadInput = {
  /** For ARTIFACT: the file's SHA-256, when known. */
  artifactSha256?: string | null | undefined;
  /** For ARTIFACT: where the file lives. */
  artifactUri?: string | null | undefined;
  /** The exact bytes, base64-encoded. */
  base64?: string | null | undefined;
  /** For MISSING: the size of the body that was not stored. */
  size?: number | null | undefined;
  /** Which bytes are stored: COMPLETE or PARTIAL need text or base64; NONE, ARTIFACT and MISSING carry none. */
  state: PayloadState;
  /** The bytes as UTF-8 text. */
  text?: string | null | undefined;
};

/** COMPLETE and PARTIAL carry stored bytes; NONE, ARTIFACT and MISSING carry none. */
export type PayloadState =
  /** A deployed file, recorded by reference. */
  | 'ARTIFACT'
  /** Every byte was stored. */
  | 'COMPLETE'
  /** A body existed but was not stored (over the size limit, or lost). */
  | 'MISSING'
  /** The event has no body. */
  | 'NONE'
  /** The bytes that arrived before the stream ended or was cut off. */
  | 'PARTIAL';

/** The layer that matched a row. Its score names it; a score is never a probability. */
export type ResolverLayer =
  /** 750–772: a word of the query is an alias that means this row. */
  | 'ALIAS'
  /** 300: a word is one edit or one transposition away from a word of its name. */
  | 'EDIT_DISTANCE'
  /** 1000: its name is the query. */
  | 'EXACT_NAME'
  /** 850: its name is exactly the words of the query. */
  | 'EXACT_WORDS'
  /** 900: the query is the start of its name. */
  | 'NAME_PREFIX'
  /** 600: its name starts with the first word and the rest is in the row. */
  | 'NAME_START'
  /** 800: every word of the query is a word of its name. */
  | 'NAME_WORDS'
  /** 700: every word of the query is somewhere in the row. */
  | 'ROW_WORDS'
  /** 200: a word sounds like part of its name. */
  | 'SOUNDS_LIKE';

export type EventMatchQueryVariables = Exact<{
  id: string | number;
}>;


export type EventMatchQuery = { event: { id: string, kind: string, headers: unknown, matchesContract: { matches: boolean, differences: Array<{ part: string, expected: string | null, recorded: string | null }> } | null } | null };

export type AppendBatchMutationVariables = Exact<{
  input: AppendBatchInput;
}>;


export type AppendBatchMutation = { appendBatch: { batchId: string, received: number, inserted: number, duplicates: number, position: string | null } };

export type EventByIdQueryVariables = Exact<{
  id: string | number;
}>;


export type EventByIdQuery = { event: { id: string, position: string, cursor: string, kind: string, direction: Direction, actionId: string, toolName: string | null, costUsd: string | null, payloadState: PayloadState, payloadSha256: string | null, payloadSize: string | null, payloadEncoding: PayloadEncoding | null, redactedSecrets: Array<string>, url: string | null, headers: unknown, payload: { sha256: string, size: string, encoding: PayloadEncoding, storage: BlobStorage, codec: string, text: string | null, base64: string } | null } | null };

export type AskQueryVariables = Exact<{
  question: string;
  first?: number | null | undefined;
}>;


export type AskQuery = { ask: { question: string, readAs: string, answer: LedgerAnswerKind, grouping: LedgerGrouping | null, measures: Array<LedgerMeasure>, notUnderstood: Array<string>, filter: { kind: Array<string> | null, direction: Array<Direction> | null, tool: Array<string> | null, session: Array<string> | null, turn: Array<string> | null, task: Array<string> | null, agent: Array<string> | null, model: Array<string> | null, status: Array<string> | null, occurredFrom: string | null, occurredTo: string | null }, counts: Array<{ key: string | null, events: number, inputTokens: string, outputTokens: string, costUsd: string }> | null, total: { events: number, costUsd: string, inputTokens: string }, events: { edges: Array<{ node: { id: string } }>, pageInfo: { hasNextPage: boolean } } } | null };

export type ReadEventsQueryVariables = Exact<{
  filter?: LedgerFilter | null | undefined;
  first?: number | null | undefined;
  after?: string | null | undefined;
  order?: LedgerOrder | null | undefined;
}>;


export type ReadEventsQuery = { events: { edges: Array<{ cursor: string, node: { id: string, position: string, cursor: string } }>, pageInfo: { hasNextPage: boolean, hasPreviousPage: boolean, startCursor: string | null, endCursor: string | null } } };

export type ReadCountsQueryVariables = Exact<{
  by: LedgerGrouping;
  filter?: LedgerFilter | null | undefined;
}>;


export type ReadCountsQuery = { ledgerCounts: Array<{ key: string | null, events: number, inputTokens: string, outputTokens: string, costUsd: string }> };

export type ReadBlobEventsQueryVariables = Exact<{
  sha256: string;
  first?: number | null | undefined;
  after?: string | null | undefined;
}>;


export type ReadBlobEventsQuery = { blob: { sha256: string, events: { edges: Array<{ cursor: string, node: { id: string, payloadSha256: string | null } }>, pageInfo: { hasNextPage: boolean, endCursor: string | null } } } | null };

export type ReadNestedEventsQueryVariables = Exact<{
  first?: number | null | undefined;
}>;


export type ReadNestedEventsQuery = { events: { edges: Array<{ node: { id: string, payload: { sha256: string, size: string } | null, batch: { id: string, collector: string } } }> } };

export type ResolveQueryVariables = Exact<{
  query: string;
  minScore?: number | null | undefined;
  limit?: number | null | undefined;
  types?: Array<string> | string | null | undefined;
}>;


export type ResolveQuery = { resolve: { query: string, readAs: Array<string>, message: string, corrections: Array<{ from: string, to: string, distance: number }>, matches: Array<{ score: number, layer: ResolverLayer, reason: string, matchedWords: Array<string>, row:
        | { name: string, type: string, kind: string | null, id: string | null, description: string }
        | { name: string, type: string, kind: string | null, id: string | null, description: string }
       }> } };

export type ResolveRowsQueryVariables = Exact<{ [key: string]: never; }>;


export type ResolveRowsQuery = { resolve: { matches: Array<{ score: number, row:
        | { __typename: 'Entry', name: string, section: { type: string, versionTag: string | null } }
        | { __typename: 'Tool', runnable: boolean, name: string, contracts: Array<{ form: ContractForm | null }>, section: { type: string, versionTag: string | null } }
       }> } };


export const EventMatchDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"EventMatch"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"event"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"headers"}},{"kind":"Field","name":{"kind":"Name","value":"matchesContract"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"matches"}},{"kind":"Field","name":{"kind":"Name","value":"differences"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"part"}},{"kind":"Field","name":{"kind":"Name","value":"expected"}},{"kind":"Field","name":{"kind":"Name","value":"recorded"}}]}}]}}]}}]}}]} as unknown as DocumentNode<EventMatchQuery, EventMatchQueryVariables>;
export const AppendBatchDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"AppendBatch"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"AppendBatchInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"appendBatch"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"batchId"}},{"kind":"Field","name":{"kind":"Name","value":"received"}},{"kind":"Field","name":{"kind":"Name","value":"inserted"}},{"kind":"Field","name":{"kind":"Name","value":"duplicates"}},{"kind":"Field","name":{"kind":"Name","value":"position"}}]}}]}}]} as unknown as DocumentNode<AppendBatchMutation, AppendBatchMutationVariables>;
export const EventByIdDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"EventById"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"event"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"position"}},{"kind":"Field","name":{"kind":"Name","value":"cursor"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"direction"}},{"kind":"Field","name":{"kind":"Name","value":"actionId"}},{"kind":"Field","name":{"kind":"Name","value":"toolName"}},{"kind":"Field","name":{"kind":"Name","value":"costUsd"}},{"kind":"Field","name":{"kind":"Name","value":"payloadState"}},{"kind":"Field","name":{"kind":"Name","value":"payloadSha256"}},{"kind":"Field","name":{"kind":"Name","value":"payloadSize"}},{"kind":"Field","name":{"kind":"Name","value":"payloadEncoding"}},{"kind":"Field","name":{"kind":"Name","value":"redactedSecrets"}},{"kind":"Field","name":{"kind":"Name","value":"url"}},{"kind":"Field","name":{"kind":"Name","value":"headers"}},{"kind":"Field","name":{"kind":"Name","value":"payload"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sha256"}},{"kind":"Field","name":{"kind":"Name","value":"size"}},{"kind":"Field","name":{"kind":"Name","value":"encoding"}},{"kind":"Field","name":{"kind":"Name","value":"storage"}},{"kind":"Field","name":{"kind":"Name","value":"codec"}},{"kind":"Field","name":{"kind":"Name","value":"text"}},{"kind":"Field","name":{"kind":"Name","value":"base64"}}]}}]}}]}}]} as unknown as DocumentNode<EventByIdQuery, EventByIdQueryVariables>;
export const AskDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Ask"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"question"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"first"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"ask"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"question"},"value":{"kind":"Variable","name":{"kind":"Name","value":"question"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"question"}},{"kind":"Field","name":{"kind":"Name","value":"readAs"}},{"kind":"Field","name":{"kind":"Name","value":"answer"}},{"kind":"Field","name":{"kind":"Name","value":"grouping"}},{"kind":"Field","name":{"kind":"Name","value":"measures"}},{"kind":"Field","name":{"kind":"Name","value":"notUnderstood"}},{"kind":"Field","name":{"kind":"Name","value":"filter"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"direction"}},{"kind":"Field","name":{"kind":"Name","value":"tool"}},{"kind":"Field","name":{"kind":"Name","value":"session"}},{"kind":"Field","name":{"kind":"Name","value":"turn"}},{"kind":"Field","name":{"kind":"Name","value":"task"}},{"kind":"Field","name":{"kind":"Name","value":"agent"}},{"kind":"Field","name":{"kind":"Name","value":"model"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"occurredFrom"}},{"kind":"Field","name":{"kind":"Name","value":"occurredTo"}}]}},{"kind":"Field","name":{"kind":"Name","value":"counts"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"key"}},{"kind":"Field","name":{"kind":"Name","value":"events"}},{"kind":"Field","name":{"kind":"Name","value":"inputTokens"}},{"kind":"Field","name":{"kind":"Name","value":"outputTokens"}},{"kind":"Field","name":{"kind":"Name","value":"costUsd"}}]}},{"kind":"Field","name":{"kind":"Name","value":"total"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"events"}},{"kind":"Field","name":{"kind":"Name","value":"costUsd"}},{"kind":"Field","name":{"kind":"Name","value":"inputTokens"}}]}},{"kind":"Field","name":{"kind":"Name","value":"events"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"Variable","name":{"kind":"Name","value":"first"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"edges"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"pageInfo"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hasNextPage"}}]}}]}}]}}]}}]} as unknown as DocumentNode<AskQuery, AskQueryVariables>;
export const ReadEventsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ReadEvents"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"filter"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"LedgerFilter"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"first"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"after"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"order"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"LedgerOrder"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"events"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"filter"},"value":{"kind":"Variable","name":{"kind":"Name","value":"filter"}}},{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"Variable","name":{"kind":"Name","value":"first"}}},{"kind":"Argument","name":{"kind":"Name","value":"after"},"value":{"kind":"Variable","name":{"kind":"Name","value":"after"}}},{"kind":"Argument","name":{"kind":"Name","value":"order"},"value":{"kind":"Variable","name":{"kind":"Name","value":"order"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"edges"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"cursor"}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"position"}},{"kind":"Field","name":{"kind":"Name","value":"cursor"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"pageInfo"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hasNextPage"}},{"kind":"Field","name":{"kind":"Name","value":"hasPreviousPage"}},{"kind":"Field","name":{"kind":"Name","value":"startCursor"}},{"kind":"Field","name":{"kind":"Name","value":"endCursor"}}]}}]}}]}}]} as unknown as DocumentNode<ReadEventsQuery, ReadEventsQueryVariables>;
export const ReadCountsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ReadCounts"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"by"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"LedgerGrouping"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"filter"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"LedgerFilter"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"ledgerCounts"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"by"},"value":{"kind":"Variable","name":{"kind":"Name","value":"by"}}},{"kind":"Argument","name":{"kind":"Name","value":"filter"},"value":{"kind":"Variable","name":{"kind":"Name","value":"filter"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"key"}},{"kind":"Field","name":{"kind":"Name","value":"events"}},{"kind":"Field","name":{"kind":"Name","value":"inputTokens"}},{"kind":"Field","name":{"kind":"Name","value":"outputTokens"}},{"kind":"Field","name":{"kind":"Name","value":"costUsd"}}]}}]}}]} as unknown as DocumentNode<ReadCountsQuery, ReadCountsQueryVariables>;
export const ReadBlobEventsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ReadBlobEvents"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"sha256"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"first"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"after"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"blob"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"sha256"},"value":{"kind":"Variable","name":{"kind":"Name","value":"sha256"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sha256"}},{"kind":"Field","name":{"kind":"Name","value":"events"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"Variable","name":{"kind":"Name","value":"first"}}},{"kind":"Argument","name":{"kind":"Name","value":"after"},"value":{"kind":"Variable","name":{"kind":"Name","value":"after"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"edges"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"cursor"}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"payloadSha256"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"pageInfo"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hasNextPage"}},{"kind":"Field","name":{"kind":"Name","value":"endCursor"}}]}}]}}]}}]}}]} as unknown as DocumentNode<ReadBlobEventsQuery, ReadBlobEventsQueryVariables>;
export const ReadNestedEventsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ReadNestedEvents"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"first"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"events"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"Variable","name":{"kind":"Name","value":"first"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"edges"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"payload"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sha256"}},{"kind":"Field","name":{"kind":"Name","value":"size"}}]}},{"kind":"Field","name":{"kind":"Name","value":"batch"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"collector"}}]}}]}}]}}]}}]}}]} as unknown as DocumentNode<ReadNestedEventsQuery, ReadNestedEventsQueryVariables>;
export const ResolveDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Resolve"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"query"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"minScore"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"limit"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"types"}},"type":{"kind":"ListType","type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resolve"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"query"},"value":{"kind":"Variable","name":{"kind":"Name","value":"query"}}},{"kind":"Argument","name":{"kind":"Name","value":"minScore"},"value":{"kind":"Variable","name":{"kind":"Name","value":"minScore"}}},{"kind":"Argument","name":{"kind":"Name","value":"limit"},"value":{"kind":"Variable","name":{"kind":"Name","value":"limit"}}},{"kind":"Argument","name":{"kind":"Name","value":"types"},"value":{"kind":"Variable","name":{"kind":"Name","value":"types"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"query"}},{"kind":"Field","name":{"kind":"Name","value":"readAs"}},{"kind":"Field","name":{"kind":"Name","value":"corrections"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"from"}},{"kind":"Field","name":{"kind":"Name","value":"to"}},{"kind":"Field","name":{"kind":"Name","value":"distance"}}]}},{"kind":"Field","name":{"kind":"Name","value":"matches"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"row"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"type"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"description"}}]}},{"kind":"Field","name":{"kind":"Name","value":"score"}},{"kind":"Field","name":{"kind":"Name","value":"layer"}},{"kind":"Field","name":{"kind":"Name","value":"reason"}},{"kind":"Field","name":{"kind":"Name","value":"matchedWords"}}]}},{"kind":"Field","name":{"kind":"Name","value":"message"}}]}}]}}]} as unknown as DocumentNode<ResolveQuery, ResolveQueryVariables>;
export const ResolveRowsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ResolveRows"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resolve"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"query"},"value":{"kind":"StringValue","value":"send an imessge","block":false}},{"kind":"Argument","name":{"kind":"Name","value":"limit"},"value":{"kind":"IntValue","value":"1"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"matches"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"score"}},{"kind":"Field","name":{"kind":"Name","value":"row"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"section"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"type"}},{"kind":"Field","name":{"kind":"Name","value":"versionTag"}}]}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Tool"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"runnable"}},{"kind":"Field","name":{"kind":"Name","value":"contracts"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"forms"},"value":{"kind":"ListValue","values":[{"kind":"EnumValue","value":"REST"}]}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"form"}}]}}]}}]}}]}}]}}]}}]} as unknown as DocumentNode<ResolveRowsQuery, ResolveRowsQueryVariables>;