/* eslint-disable */
/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';
/** A door a token may be limited to. */
export type AuthDoor =
  /** GET /ledger/blob/SHA256: the stored bytes of one blob. */
  | 'BLOB'
  /** Kept for the dirledger command line in process; no route presents a token at this door today. */
  | 'CLI'
  /** POST /api/dispatch with the canonical call (also `dirledger call --server`). */
  | 'DISPATCH'
  /** Operations on /graphql over plain HTTP. */
  | 'GRAPHQL'
  /** Operations on /graphql answered as Server-Sent Events (accept: text/event-stream). */
  | 'GRAPHQL_SSE'
  /** Operations on /graphql over graphql-ws (a WebSocket). */
  | 'GRAPHQL_WS'
  /** POST /ledger/batches: a collector appending a batch of events. */
  | 'INGEST'
  /** POST /mcp, MCP streamable HTTP. */
  | 'MCP'
  /** MCP over stdio: `dirledger mcp` running the cores in process. */
  | 'MCP_STDIO'
  /** The OpenAI- and Anthropic-compatible model routes under /v1 (chat completions, responses, embeddings, messages, models). */
  | 'MODEL'
  /** POST /v1/traces: OpenTelemetry traces in (OTLP/HTTP). */
  | 'OTLP'
  /** POST /api/tools/NAME with the args as body, and the read routes under /api/directory and /api/ledger. */
  | 'REST'
  /** POST /api/dispatch with accept: text/event-stream: the result as Server-Sent Events. */
  | 'SSE'
  /** GET /api/tools/NAME with the args in the query string. */
  | 'URL'
  /** POST /hooks/NAME, with a token or a signature. */
  | 'WEBHOOK'
  /** WS /api/ws: calls as JSON messages on one socket. */
  | 'WEBSOCKET';

/** What no longer matches the hash chain. */
export type ChainProblemKind =
  /** A batch row (collector, position, counts, time or stored digests) no longer hashes to its link. */
  | 'BATCH_CHANGED'
  /** A batch of the chain is gone (deleted). */
  | 'BATCH_MISSING'
  /** A collector's position is beyond anything its batches carried. */
  | 'COLLECTOR_AHEAD'
  /** A collector named by batches has no row. */
  | 'COLLECTOR_MISSING'
  /** A collector's delivered position is below what its batches carried (deleted and inserted again). */
  | 'COLLECTOR_REWOUND'
  /** An event row no longer hashes as appended; `columns` names what changed when it can be told. */
  | 'EVENT_CHANGED'
  /** An event the chain recorded is gone (deleted). */
  | 'EVENT_MISSING'
  /** An event in no chained batch: added behind the append path, or its position changed. */
  | 'EVENT_UNCHAINED'
  /** The chain head disagrees with the last batch stored. */
  | 'HEAD_MISMATCH';

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

/** HTTP {method, url, headers, body}; MCP {method: "MCP", server, headers, tool, arguments}; CLI {method: "CLI", command}; SEQUENCE an array of those run in order; CODE {method: "CODE", language, code}. */
export type ContractShape =
  /** A command line: {method: "CLI", command}, run without a shell. */
  | 'CLI'
  /** Code to paste: {method: "CODE", language, code}; the runner never sends it. */
  | 'CODE'
  /** An HTTP request: {method, url, headers, body}. */
  | 'HTTP'
  /** An MCP tools/call: {method: "MCP", server, headers, tool, arguments}; the server a URL or a stdio command. */
  | 'MCP'
  /** An array of the other shapes, run in order. */
  | 'SEQUENCE';

/** Where a form puts the credential. */
export type CredentialPlace =
  /** the MCP client's configured authorization header: Bearer [DIRLEDGER_TOKEN] */
  | 'CLIENT_CONFIG'
  /** the client's token option (sent as the authorization header) */
  | 'CLIENT_OPTION'
  /** graphql-ws's connection_init payload {authorization: "Bearer [DIRLEDGER_TOKEN]"} */
  | 'CONNECTION_INIT'
  /** the environment variable DIRLEDGER_TOKEN=[DIRLEDGER_TOKEN] */
  | 'ENV'
  /** the first message {"type": "auth", "token": "[DIRLEDGER_TOKEN]"} */
  | 'FIRST_MESSAGE'
  /** the authorization header: Bearer [DIRLEDGER_TOKEN] */
  | 'HEADER'
  /** inside the link: the ?token= query parameter, no header */
  | 'LINK'
  /** none: the call runs inside the server */
  | 'NONE'
  /** the outside service's own secrets, by name */
  | 'UPSTREAM';

/** IN: arrived at this system. OUT: sent by it. */
export type Direction =
  /** Arrived at this system. */
  | 'IN'
  /** Sent by this system. */
  | 'OUT';

/** OK: the call answered successfully; ERROR: it was sent and failed; REFUSED: nothing was sent; DRY_RUN: rendered, not sent. */
export type DispatchOutcome =
  /** Rendered, not sent (a dry run). */
  | 'DRY_RUN'
  /** The call was sent and failed. */
  | 'ERROR'
  /** The call answered successfully. */
  | 'OK'
  /** Refused before anything was sent. */
  | 'REFUSED';

/** The limits of the new token; each becomes one caveat. Omitted limits are not added. */
export type IssueTokenInput = {
  /** Every call made with the token is recorded as this agent. */
  agent?: string | null | undefined;
  /** Only at the server whose AUTH_AUDIENCE is this. */
  audience?: string | null | undefined;
  /** Collector ids whose batches (and positions) the token may append; a trailing * is a prefix. */
  collectors?: Array<string> | null | undefined;
  /** Model cost in USD at most (a decimal), shared by every token narrowed from this one. */
  costUsd?: string | null | undefined;
  /** Only these doors may take the new token; omitted: no doors caveat is added (the issuer's own limits still apply). */
  doors?: Array<AuthDoor> | null | undefined;
  /** The new token stops working at this instant (UTC). */
  expires?: string | null | undefined;
  /** File rows and path arguments only inside these folders. */
  folders?: Array<string> | null | undefined;
  /** Model rows the model door may call; a trailing * is a prefix. */
  models?: Array<string> | null | undefined;
  /** The new token works only from this instant (UTC). */
  notBefore?: string | null | undefined;
  /** Omitted: every power the issuer may grant. */
  powers?: Array<Power> | null | undefined;
  /** Which ledger events the new token may read; omitted: no read caveat is added (the issuer's own limits still apply). */
  read?: ReadScope | null | undefined;
  /** Every call made with the token is filed under this task. */
  task?: string | null | undefined;
  /** Model tokens (input and output) at most, shared by every token narrowed from this one. */
  tokens?: number | null | undefined;
  /** Tool names; a trailing * is a prefix. */
  tools?: Array<string> | null | undefined;
  /** How many calls, counted across every token narrowed from this one. */
  uses?: number | null | undefined;
};

/** Which part of a LedgerAnswer answers the question. */
export type LedgerAnswerKind =
  /** The question grouped: see counts. */
  | 'COUNTS'
  /** The question asked for events: see events. */
  | 'EVENTS'
  /** The question measured without grouping: see total. */
  | 'TOTAL';

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

/** What a token may do besides reading: call tools, append ledger batches, issue tokens, revoke tokens. */
export type Power =
  /** Call tools, through any door that runs one. */
  | 'CALL'
  /** Append ledger batches (POST /ledger/batches, appendBatch, OTLP traces). */
  | 'INGEST'
  /** Issue tokens; each keeps the issuing token's limits (tools, doors, time, task, reads…). */
  | 'ISSUE'
  /** Revoke tokens, and pass this power on to tokens it issues. */
  | 'REVOKE';

/** What a token's holder may read of the ledger: nothing, its own task's events, or everything. */
export type ReadScope =
  /** Reads the whole ledger. */
  | 'ALL'
  /** Reads nothing of the ledger. */
  | 'NONE'
  /** Reads only its own task's events (the task of its task caveat). */
  | 'TASK';

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

/** Why a stream stopped before its end. */
export type StreamCut =
  /** The client disconnected and the stream ran past the cut-off. */
  | 'CUTOFF'
  /** The source broke off. */
  | 'SOURCE_ERROR';

export type ConsoleLiveSubscriptionVariables = Exact<{
  filter?: LedgerFilter | null | undefined;
  after?: string | null | undefined;
}>;


export type ConsoleLiveSubscription = { ledgerEvents: { id: string, cursor: string, position: string, occurredAt: string, kind: string, direction: Direction, toolName: string | null, status: string | null, session: string | null, task: string | null, actionId: string } };

export type ConsoleSignInQueryVariables = Exact<{ [key: string]: never; }>;


export type ConsoleSignInQuery = { directoryStats: { rows: number } };

export type ConsoleActionQueryVariables = Exact<{
  id: string | number;
}>;


export type ConsoleActionQuery = { action: { id: string, toolName: string | null, outcome: DispatchOutcome | null, status: string | null, startedAt: string | null, endedAt: string | null, events: Array<{ id: string, position: string, occurredAt: string, kind: string, direction: Direction, status: string | null, method: string | null, url: string | null, task: string | null, session: string | null, model: string | null, inputTokens: number | null, outputTokens: number | null, costUsd: string | null, metadata: unknown, redactedSecrets: Array<string>, payloadState: PayloadState, payloadSha256: string | null, payloadSize: string | null, contract: { form: string, sha256: string } | null, matchesContract: { matches: boolean, differences: Array<{ part: string, expected: string | null, recorded: string | null }> } | null, payload: { base64: string, text: string | null } | null }> } | null };

export type ConsoleStreamSubscriptionVariables = Exact<{
  actionId: string | number;
}>;


export type ConsoleStreamSubscription = { streamCapture: { sequence: number, offset: number, size: number, base64: string, final: boolean, state: PayloadState | null, sha256: string | null, totalSize: number | null, cut: StreamCut | null } };

export type ConsoleCountsQueryVariables = Exact<{
  by: LedgerGrouping;
}>;


export type ConsoleCountsQuery = { ledgerCounts: Array<{ key: string | null, events: number, inputTokens: string, outputTokens: string, costUsd: string }> };

export type ConsoleAskQueryVariables = Exact<{
  question: string;
}>;


export type ConsoleAskQuery = { ask: { readAs: string, answer: LedgerAnswerKind, notUnderstood: Array<string>, counts: Array<{ key: string | null, events: number, inputTokens: string, outputTokens: string, costUsd: string }> | null, total: { key: string | null, events: number, inputTokens: string, outputTokens: string, costUsd: string }, events: { edges: Array<{ node: { id: string, actionId: string, kind: string, toolName: string | null, status: string | null } }> } } | null };

export type ConsoleVerifyQueryVariables = Exact<{ [key: string]: never; }>;


export type ConsoleVerifyQuery = { verifyLedger: { ok: boolean, batches: number, events: number, problemCount: number, genesisPosition: string, headSeq: string | null, headLink: string | null, lastPosition: string | null, problems: Array<{ kind: ChainProblemKind, message: string, position: string | null, batchId: string | null, eventId: string | null, columns: Array<string> | null }> } };

export type ConsoleResolveQueryVariables = Exact<{
  query: string;
}>;


export type ConsoleResolveQuery = { resolve: { query: string, message: string, readAs: Array<string>, corrections: Array<{ from: string, to: string }>, matches: Array<{ score: number, layer: ResolverLayer, reason: string, row:
        | { __typename: 'Entry', name: string, type: string, description: string }
        | { __typename: 'Tool', name: string, type: string, description: string }
       }> } };

export type ConsoleTaskQueryVariables = Exact<{
  id: string | number;
}>;


export type ConsoleTaskQuery = { task: { id: string, calls: { edges: Array<{ node: { id: string, toolName: string | null, outcome: DispatchOutcome | null, status: string | null, startedAt: string | null } }> }, refusals: { edges: Array<{ node: { id: string, actionId: string, occurredAt: string, toolName: string | null, status: string | null, metadata: unknown } }> } } | null };

export type ConsoleInspectTokenQueryVariables = Exact<{
  token: string;
}>;


export type ConsoleInspectTokenQuery = { inspectToken: { valid: boolean, revoked: boolean, tokenId: string | null, caveats: Array<string>, limits: Array<string>, issuedBy: Array<string>, uses: Array<{ caveat: string, max: number, used: number }> | null, revocation: { tokenId: string, reason: string, revokedAt: string, revokedBy: string } | null } };

export type ConsoleIssueTokenMutationVariables = Exact<{
  input: IssueTokenInput;
}>;


export type ConsoleIssueTokenMutation = { issueToken: { token: string, tokenId: string, caveats: Array<string>, limits: Array<string> } };

export type ConsoleToolQueryVariables = Exact<{
  name: string;
  args?: unknown;
}>;


export type ConsoleToolQuery = { tool: { name: string, description: string, kind: string | null, runnable: boolean, reasons: Array<string>, secretNames: Array<string>, unboundSecrets: Array<string>, argsSchema: unknown, section: { type: string, versionTag: string | null, builtAt: string | null }, contracts: Array<{ form: ContractForm | null, door: string | null, shape: ContractShape, text: string | null, json: unknown, sha256: string, secretNames: Array<string>, parts: { sentTo: string, credentialPlace: CredentialPlace, credential: string, wrapping: string } | null }> } | null, events: { edges: Array<{ node: { id: string, actionId: string, kind: string, direction: Direction, status: string | null, occurredAt: string, contract: { form: string, sha256: string } | null } }> } };

export type ConsoleDispatchMutationVariables = Exact<{
  tool: string;
  args?: unknown;
}>;


export type ConsoleDispatchMutation = { dispatch: { actionId: string, outcome: DispatchOutcome, status: number | null, outputText: string | null, error: { code: string, message: string } | null } };

export class TypedDocumentString<TResult, TVariables>
  extends String
  implements DocumentTypeDecoration<TResult, TVariables>
{
  __apiType?: NonNullable<DocumentTypeDecoration<TResult, TVariables>['__apiType']>;
  private value: string;
  public __meta__?: Record<string, any> | undefined;

  constructor(value: string, __meta__?: Record<string, any> | undefined) {
    super(value);
    this.value = value;
    this.__meta__ = __meta__;
  }

  override toString(): string & DocumentTypeDecoration<TResult, TVariables> {
    return this.value;
  }
}

export const ConsoleLiveDocument = new TypedDocumentString(`
    subscription ConsoleLive($filter: LedgerFilter, $after: String) {
  ledgerEvents(filter: $filter, after: $after) {
    id
    cursor
    position
    occurredAt
    kind
    direction
    toolName
    status
    session
    task
    actionId
  }
}
    `) as unknown as TypedDocumentString<ConsoleLiveSubscription, ConsoleLiveSubscriptionVariables>;
export const ConsoleSignInDocument = new TypedDocumentString(`
    query ConsoleSignIn {
  directoryStats {
    rows
  }
}
    `) as unknown as TypedDocumentString<ConsoleSignInQuery, ConsoleSignInQueryVariables>;
export const ConsoleActionDocument = new TypedDocumentString(`
    query ConsoleAction($id: ID!) {
  action(id: $id) {
    id
    toolName
    outcome
    status
    startedAt
    endedAt
    events {
      id
      position
      occurredAt
      kind
      direction
      status
      method
      url
      task
      session
      model
      inputTokens
      outputTokens
      costUsd
      metadata
      redactedSecrets
      payloadState
      payloadSha256
      payloadSize
      contract {
        form
        sha256
      }
      matchesContract {
        matches
        differences {
          part
          expected
          recorded
        }
      }
      payload {
        base64
        text
      }
    }
  }
}
    `) as unknown as TypedDocumentString<ConsoleActionQuery, ConsoleActionQueryVariables>;
export const ConsoleStreamDocument = new TypedDocumentString(`
    subscription ConsoleStream($actionId: ID!) {
  streamCapture(actionId: $actionId) {
    sequence
    offset
    size
    base64
    final
    state
    sha256
    totalSize
    cut
  }
}
    `) as unknown as TypedDocumentString<ConsoleStreamSubscription, ConsoleStreamSubscriptionVariables>;
export const ConsoleCountsDocument = new TypedDocumentString(`
    query ConsoleCounts($by: LedgerGrouping!) {
  ledgerCounts(by: $by) {
    key
    events
    inputTokens
    outputTokens
    costUsd
  }
}
    `) as unknown as TypedDocumentString<ConsoleCountsQuery, ConsoleCountsQueryVariables>;
export const ConsoleAskDocument = new TypedDocumentString(`
    query ConsoleAsk($question: String!) {
  ask(question: $question) {
    readAs
    answer
    notUnderstood
    counts {
      key
      events
      inputTokens
      outputTokens
      costUsd
    }
    total {
      key
      events
      inputTokens
      outputTokens
      costUsd
    }
    events(first: 20, order: DESC) {
      edges {
        node {
          id
          actionId
          kind
          toolName
          status
        }
      }
    }
  }
}
    `) as unknown as TypedDocumentString<ConsoleAskQuery, ConsoleAskQueryVariables>;
export const ConsoleVerifyDocument = new TypedDocumentString(`
    query ConsoleVerify {
  verifyLedger(limit: 50) {
    ok
    batches
    events
    problemCount
    genesisPosition
    headSeq
    headLink
    lastPosition
    problems {
      kind
      message
      position
      batchId
      eventId
      columns
    }
  }
}
    `) as unknown as TypedDocumentString<ConsoleVerifyQuery, ConsoleVerifyQueryVariables>;
export const ConsoleResolveDocument = new TypedDocumentString(`
    query ConsoleResolve($query: String!) {
  resolve(query: $query, limit: 20) {
    query
    message
    readAs
    corrections {
      from
      to
    }
    matches {
      score
      layer
      reason
      row {
        __typename
        name
        type
        description
      }
    }
  }
}
    `) as unknown as TypedDocumentString<ConsoleResolveQuery, ConsoleResolveQueryVariables>;
export const ConsoleTaskDocument = new TypedDocumentString(`
    query ConsoleTask($id: ID!) {
  task(id: $id) {
    id
    calls(first: 200) {
      edges {
        node {
          id
          toolName
          outcome
          status
          startedAt
        }
      }
    }
    refusals(first: 200) {
      edges {
        node {
          id
          actionId
          occurredAt
          toolName
          status
          metadata
        }
      }
    }
  }
}
    `) as unknown as TypedDocumentString<ConsoleTaskQuery, ConsoleTaskQueryVariables>;
export const ConsoleInspectTokenDocument = new TypedDocumentString(`
    query ConsoleInspectToken($token: String!) {
  inspectToken(token: $token) {
    valid
    revoked
    tokenId
    caveats
    limits
    issuedBy
    uses {
      caveat
      max
      used
    }
    revocation {
      tokenId
      reason
      revokedAt
      revokedBy
    }
  }
}
    `) as unknown as TypedDocumentString<ConsoleInspectTokenQuery, ConsoleInspectTokenQueryVariables>;
export const ConsoleIssueTokenDocument = new TypedDocumentString(`
    mutation ConsoleIssueToken($input: IssueTokenInput!) {
  issueToken(input: $input) {
    token
    tokenId
    caveats
    limits
  }
}
    `) as unknown as TypedDocumentString<ConsoleIssueTokenMutation, ConsoleIssueTokenMutationVariables>;
export const ConsoleToolDocument = new TypedDocumentString(`
    query ConsoleTool($name: String!, $args: JSON) {
  tool(name: $name) {
    name
    description
    kind
    runnable
    reasons
    secretNames
    unboundSecrets
    argsSchema
    section {
      type
      versionTag
      builtAt
    }
    contracts(args: $args) {
      form
      door
      shape
      text
      json
      sha256
      secretNames
      parts {
        sentTo
        credentialPlace
        credential
        wrapping
      }
    }
  }
  events(filter: {tool: [$name]}, order: DESC, first: 20) {
    edges {
      node {
        id
        actionId
        kind
        direction
        status
        occurredAt
        contract {
          form
          sha256
        }
      }
    }
  }
}
    `) as unknown as TypedDocumentString<ConsoleToolQuery, ConsoleToolQueryVariables>;
export const ConsoleDispatchDocument = new TypedDocumentString(`
    mutation ConsoleDispatch($tool: String!, $args: JSON) {
  dispatch(tool: $tool, args: $args, form: DISPATCH) {
    actionId
    outcome
    status
    outputText
    error {
      code
      message
    }
  }
}
    `) as unknown as TypedDocumentString<ConsoleDispatchMutation, ConsoleDispatchMutationVariables>;