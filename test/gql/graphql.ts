/* eslint-disable */
/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';
export type AppendBatchInput = {
  collector: string;
  events: Array<LedgerEventInput>;
  /** The collector's delivered position after this batch. */
  position?: string | null | undefined;
};

export type BlobStorage =
  /** Compressed in PostgreSQL. */
  | 'INLINE'
  /** In the object store (a folder or S3-compatible storage). */
  | 'OBJECT';

/** IN: arrived at this system. OUT: sent by it. */
export type Direction =
  | 'IN'
  | 'OUT';

export type LedgerEventInput = {
  actionId: string;
  agent?: string | null | undefined;
  costUsd?: string | null | undefined;
  direction: Direction;
  headers?: unknown;
  /** The source's own stable event id. */
  id: string;
  inputTokens?: number | null | undefined;
  kind: string;
  metadata?: unknown;
  method?: string | null | undefined;
  model?: string | null | undefined;
  occurredAt: string;
  outputTokens?: number | null | undefined;
  payload?: PayloadInput | null | undefined;
  session?: string | null | undefined;
  status?: string | null | undefined;
  task?: string | null | undefined;
  tool?: string | null | undefined;
  turn?: string | null | undefined;
  url?: string | null | undefined;
};

/** UTF8 only when strict decoding gives back the identical bytes. */
export type PayloadEncoding =
  | 'BINARY'
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

export type AppendBatchMutationVariables = Exact<{
  input: AppendBatchInput;
}>;


export type AppendBatchMutation = { appendBatch: { batchId: string, received: number, inserted: number, duplicates: number, position: string | null } };

export type EventByIdQueryVariables = Exact<{
  id: string | number;
}>;


export type EventByIdQuery = { event: { id: string, position: string, cursor: string, kind: string, direction: Direction, actionId: string, tool: string | null, costUsd: string | null, payloadState: PayloadState, payloadSha256: string | null, payloadSize: string | null, payloadEncoding: PayloadEncoding | null, redactedSecrets: Array<string>, url: string | null, headers: unknown, payload: { sha256: string, size: string, encoding: PayloadEncoding, storage: BlobStorage, codec: string, text: string | null, base64: string } | null } | null };


export const AppendBatchDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"AppendBatch"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"AppendBatchInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"appendBatch"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"batchId"}},{"kind":"Field","name":{"kind":"Name","value":"received"}},{"kind":"Field","name":{"kind":"Name","value":"inserted"}},{"kind":"Field","name":{"kind":"Name","value":"duplicates"}},{"kind":"Field","name":{"kind":"Name","value":"position"}}]}}]}}]} as unknown as DocumentNode<AppendBatchMutation, AppendBatchMutationVariables>;
export const EventByIdDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"EventById"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"event"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"position"}},{"kind":"Field","name":{"kind":"Name","value":"cursor"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"direction"}},{"kind":"Field","name":{"kind":"Name","value":"actionId"}},{"kind":"Field","name":{"kind":"Name","value":"tool"}},{"kind":"Field","name":{"kind":"Name","value":"costUsd"}},{"kind":"Field","name":{"kind":"Name","value":"payloadState"}},{"kind":"Field","name":{"kind":"Name","value":"payloadSha256"}},{"kind":"Field","name":{"kind":"Name","value":"payloadSize"}},{"kind":"Field","name":{"kind":"Name","value":"payloadEncoding"}},{"kind":"Field","name":{"kind":"Name","value":"redactedSecrets"}},{"kind":"Field","name":{"kind":"Name","value":"url"}},{"kind":"Field","name":{"kind":"Name","value":"headers"}},{"kind":"Field","name":{"kind":"Name","value":"payload"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sha256"}},{"kind":"Field","name":{"kind":"Name","value":"size"}},{"kind":"Field","name":{"kind":"Name","value":"encoding"}},{"kind":"Field","name":{"kind":"Name","value":"storage"}},{"kind":"Field","name":{"kind":"Name","value":"codec"}},{"kind":"Field","name":{"kind":"Name","value":"text"}},{"kind":"Field","name":{"kind":"Name","value":"base64"}}]}}]}}]}}]} as unknown as DocumentNode<EventByIdQuery, EventByIdQueryVariables>;