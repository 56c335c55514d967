/* eslint-disable */
import * as types from './graphql';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  mutation AppendBatch($input: AppendBatchInput!) {\n    appendBatch(input: $input) {\n      batchId\n      received\n      inserted\n      duplicates\n      position\n    }\n  }\n": typeof types.AppendBatchDocument,
    "\n  query EventById($id: ID!) {\n    event(id: $id) {\n      id\n      position\n      cursor\n      kind\n      direction\n      actionId\n      tool\n      costUsd\n      payloadState\n      payloadSha256\n      payloadSize\n      payloadEncoding\n      redactedSecrets\n      url\n      headers\n      payload {\n        sha256\n        size\n        encoding\n        storage\n        codec\n        text\n        base64\n      }\n    }\n  }\n": typeof types.EventByIdDocument,
};
const documents: Documents = {
    "\n  mutation AppendBatch($input: AppendBatchInput!) {\n    appendBatch(input: $input) {\n      batchId\n      received\n      inserted\n      duplicates\n      position\n    }\n  }\n": types.AppendBatchDocument,
    "\n  query EventById($id: ID!) {\n    event(id: $id) {\n      id\n      position\n      cursor\n      kind\n      direction\n      actionId\n      tool\n      costUsd\n      payloadState\n      payloadSha256\n      payloadSize\n      payloadEncoding\n      redactedSecrets\n      url\n      headers\n      payload {\n        sha256\n        size\n        encoding\n        storage\n        codec\n        text\n        base64\n      }\n    }\n  }\n": types.EventByIdDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation AppendBatch($input: AppendBatchInput!) {\n    appendBatch(input: $input) {\n      batchId\n      received\n      inserted\n      duplicates\n      position\n    }\n  }\n"): (typeof documents)["\n  mutation AppendBatch($input: AppendBatchInput!) {\n    appendBatch(input: $input) {\n      batchId\n      received\n      inserted\n      duplicates\n      position\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query EventById($id: ID!) {\n    event(id: $id) {\n      id\n      position\n      cursor\n      kind\n      direction\n      actionId\n      tool\n      costUsd\n      payloadState\n      payloadSha256\n      payloadSize\n      payloadEncoding\n      redactedSecrets\n      url\n      headers\n      payload {\n        sha256\n        size\n        encoding\n        storage\n        codec\n        text\n        base64\n      }\n    }\n  }\n"): (typeof documents)["\n  query EventById($id: ID!) {\n    event(id: $id) {\n      id\n      position\n      cursor\n      kind\n      direction\n      actionId\n      tool\n      costUsd\n      payloadState\n      payloadSha256\n      payloadSize\n      payloadEncoding\n      redactedSecrets\n      url\n      headers\n      payload {\n        sha256\n        size\n        encoding\n        storage\n        codec\n        text\n        base64\n      }\n    }\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;