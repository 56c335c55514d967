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
    "\n  query EventMatch($id: ID!) {\n    event(id: $id) {\n      id\n      kind\n      headers\n      matchesContract {\n        matches\n        differences {\n          part\n          expected\n          recorded\n        }\n      }\n    }\n  }\n": typeof types.EventMatchDocument,
    "\n  mutation AppendBatch($input: AppendBatchInput!) {\n    appendBatch(input: $input) {\n      batchId\n      received\n      inserted\n      duplicates\n      position\n    }\n  }\n": typeof types.AppendBatchDocument,
    "\n  query EventById($id: ID!) {\n    event(id: $id) {\n      id\n      position\n      cursor\n      kind\n      direction\n      actionId\n      toolName\n      costUsd\n      payloadState\n      payloadSha256\n      payloadSize\n      payloadEncoding\n      redactedSecrets\n      url\n      headers\n      payload {\n        sha256\n        size\n        encoding\n        storage\n        codec\n        text\n        base64\n      }\n    }\n  }\n": typeof types.EventByIdDocument,
    "\n  query Ask($question: String!, $first: Int) {\n    ask(question: $question) {\n      question\n      readAs\n      answer\n      grouping\n      measures\n      notUnderstood\n      filter {\n        kind\n        direction\n        tool\n        session\n        turn\n        task\n        agent\n        model\n        status\n        occurredFrom\n        occurredTo\n      }\n      counts {\n        key\n        events\n        inputTokens\n        outputTokens\n        costUsd\n      }\n      total {\n        events\n        costUsd\n        inputTokens\n      }\n      events(first: $first) {\n        edges {\n          node {\n            id\n          }\n        }\n        pageInfo {\n          hasNextPage\n        }\n      }\n    }\n  }\n": typeof types.AskDocument,
    "\n  query ReadEvents($filter: LedgerFilter, $first: Int, $after: String, $order: LedgerOrder) {\n    events(filter: $filter, first: $first, after: $after, order: $order) {\n      edges {\n        cursor\n        node {\n          id\n          position\n          cursor\n        }\n      }\n      pageInfo {\n        hasNextPage\n        hasPreviousPage\n        startCursor\n        endCursor\n      }\n    }\n  }\n": typeof types.ReadEventsDocument,
    "\n  query ReadCounts($by: LedgerGrouping!, $filter: LedgerFilter) {\n    ledgerCounts(by: $by, filter: $filter) {\n      key\n      events\n      inputTokens\n      outputTokens\n      costUsd\n    }\n  }\n": typeof types.ReadCountsDocument,
    "\n  query ReadBlobEvents($sha256: String!, $first: Int, $after: String) {\n    blob(sha256: $sha256) {\n      sha256\n      events(first: $first, after: $after) {\n        edges {\n          cursor\n          node {\n            id\n            payloadSha256\n          }\n        }\n        pageInfo {\n          hasNextPage\n          endCursor\n        }\n      }\n    }\n  }\n": typeof types.ReadBlobEventsDocument,
    "\n  query ReadNestedEvents($first: Int) {\n    events(first: $first) {\n      edges {\n        node {\n          id\n          payload {\n            sha256\n            size\n          }\n          batch {\n            id\n            collector\n          }\n        }\n      }\n    }\n  }\n": typeof types.ReadNestedEventsDocument,
    "\n  query Resolve($query: String!, $minScore: Int, $limit: Int, $types: [String!]) {\n    resolve(query: $query, minScore: $minScore, limit: $limit, types: $types) {\n      query\n      readAs\n      corrections { from to distance }\n      matches { row { name type kind id description } score layer reason matchedWords }\n      message\n    }\n  }\n": typeof types.ResolveDocument,
    "\n      query ResolveRows {\n        resolve(query: \"send an imessge\", limit: 1) {\n          matches {\n            score\n            row {\n              __typename\n              name\n              section { type versionTag }\n              ... on Tool { runnable contracts(forms: [REST]) { form } }\n            }\n          }\n        }\n      }\n    ": typeof types.ResolveRowsDocument,
};
const documents: Documents = {
    "\n  query EventMatch($id: ID!) {\n    event(id: $id) {\n      id\n      kind\n      headers\n      matchesContract {\n        matches\n        differences {\n          part\n          expected\n          recorded\n        }\n      }\n    }\n  }\n": types.EventMatchDocument,
    "\n  mutation AppendBatch($input: AppendBatchInput!) {\n    appendBatch(input: $input) {\n      batchId\n      received\n      inserted\n      duplicates\n      position\n    }\n  }\n": types.AppendBatchDocument,
    "\n  query EventById($id: ID!) {\n    event(id: $id) {\n      id\n      position\n      cursor\n      kind\n      direction\n      actionId\n      toolName\n      costUsd\n      payloadState\n      payloadSha256\n      payloadSize\n      payloadEncoding\n      redactedSecrets\n      url\n      headers\n      payload {\n        sha256\n        size\n        encoding\n        storage\n        codec\n        text\n        base64\n      }\n    }\n  }\n": types.EventByIdDocument,
    "\n  query Ask($question: String!, $first: Int) {\n    ask(question: $question) {\n      question\n      readAs\n      answer\n      grouping\n      measures\n      notUnderstood\n      filter {\n        kind\n        direction\n        tool\n        session\n        turn\n        task\n        agent\n        model\n        status\n        occurredFrom\n        occurredTo\n      }\n      counts {\n        key\n        events\n        inputTokens\n        outputTokens\n        costUsd\n      }\n      total {\n        events\n        costUsd\n        inputTokens\n      }\n      events(first: $first) {\n        edges {\n          node {\n            id\n          }\n        }\n        pageInfo {\n          hasNextPage\n        }\n      }\n    }\n  }\n": types.AskDocument,
    "\n  query ReadEvents($filter: LedgerFilter, $first: Int, $after: String, $order: LedgerOrder) {\n    events(filter: $filter, first: $first, after: $after, order: $order) {\n      edges {\n        cursor\n        node {\n          id\n          position\n          cursor\n        }\n      }\n      pageInfo {\n        hasNextPage\n        hasPreviousPage\n        startCursor\n        endCursor\n      }\n    }\n  }\n": types.ReadEventsDocument,
    "\n  query ReadCounts($by: LedgerGrouping!, $filter: LedgerFilter) {\n    ledgerCounts(by: $by, filter: $filter) {\n      key\n      events\n      inputTokens\n      outputTokens\n      costUsd\n    }\n  }\n": types.ReadCountsDocument,
    "\n  query ReadBlobEvents($sha256: String!, $first: Int, $after: String) {\n    blob(sha256: $sha256) {\n      sha256\n      events(first: $first, after: $after) {\n        edges {\n          cursor\n          node {\n            id\n            payloadSha256\n          }\n        }\n        pageInfo {\n          hasNextPage\n          endCursor\n        }\n      }\n    }\n  }\n": types.ReadBlobEventsDocument,
    "\n  query ReadNestedEvents($first: Int) {\n    events(first: $first) {\n      edges {\n        node {\n          id\n          payload {\n            sha256\n            size\n          }\n          batch {\n            id\n            collector\n          }\n        }\n      }\n    }\n  }\n": types.ReadNestedEventsDocument,
    "\n  query Resolve($query: String!, $minScore: Int, $limit: Int, $types: [String!]) {\n    resolve(query: $query, minScore: $minScore, limit: $limit, types: $types) {\n      query\n      readAs\n      corrections { from to distance }\n      matches { row { name type kind id description } score layer reason matchedWords }\n      message\n    }\n  }\n": types.ResolveDocument,
    "\n      query ResolveRows {\n        resolve(query: \"send an imessge\", limit: 1) {\n          matches {\n            score\n            row {\n              __typename\n              name\n              section { type versionTag }\n              ... on Tool { runnable contracts(forms: [REST]) { form } }\n            }\n          }\n        }\n      }\n    ": types.ResolveRowsDocument,
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
export function graphql(source: "\n  query EventMatch($id: ID!) {\n    event(id: $id) {\n      id\n      kind\n      headers\n      matchesContract {\n        matches\n        differences {\n          part\n          expected\n          recorded\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query EventMatch($id: ID!) {\n    event(id: $id) {\n      id\n      kind\n      headers\n      matchesContract {\n        matches\n        differences {\n          part\n          expected\n          recorded\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation AppendBatch($input: AppendBatchInput!) {\n    appendBatch(input: $input) {\n      batchId\n      received\n      inserted\n      duplicates\n      position\n    }\n  }\n"): (typeof documents)["\n  mutation AppendBatch($input: AppendBatchInput!) {\n    appendBatch(input: $input) {\n      batchId\n      received\n      inserted\n      duplicates\n      position\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query EventById($id: ID!) {\n    event(id: $id) {\n      id\n      position\n      cursor\n      kind\n      direction\n      actionId\n      toolName\n      costUsd\n      payloadState\n      payloadSha256\n      payloadSize\n      payloadEncoding\n      redactedSecrets\n      url\n      headers\n      payload {\n        sha256\n        size\n        encoding\n        storage\n        codec\n        text\n        base64\n      }\n    }\n  }\n"): (typeof documents)["\n  query EventById($id: ID!) {\n    event(id: $id) {\n      id\n      position\n      cursor\n      kind\n      direction\n      actionId\n      toolName\n      costUsd\n      payloadState\n      payloadSha256\n      payloadSize\n      payloadEncoding\n      redactedSecrets\n      url\n      headers\n      payload {\n        sha256\n        size\n        encoding\n        storage\n        codec\n        text\n        base64\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Ask($question: String!, $first: Int) {\n    ask(question: $question) {\n      question\n      readAs\n      answer\n      grouping\n      measures\n      notUnderstood\n      filter {\n        kind\n        direction\n        tool\n        session\n        turn\n        task\n        agent\n        model\n        status\n        occurredFrom\n        occurredTo\n      }\n      counts {\n        key\n        events\n        inputTokens\n        outputTokens\n        costUsd\n      }\n      total {\n        events\n        costUsd\n        inputTokens\n      }\n      events(first: $first) {\n        edges {\n          node {\n            id\n          }\n        }\n        pageInfo {\n          hasNextPage\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query Ask($question: String!, $first: Int) {\n    ask(question: $question) {\n      question\n      readAs\n      answer\n      grouping\n      measures\n      notUnderstood\n      filter {\n        kind\n        direction\n        tool\n        session\n        turn\n        task\n        agent\n        model\n        status\n        occurredFrom\n        occurredTo\n      }\n      counts {\n        key\n        events\n        inputTokens\n        outputTokens\n        costUsd\n      }\n      total {\n        events\n        costUsd\n        inputTokens\n      }\n      events(first: $first) {\n        edges {\n          node {\n            id\n          }\n        }\n        pageInfo {\n          hasNextPage\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ReadEvents($filter: LedgerFilter, $first: Int, $after: String, $order: LedgerOrder) {\n    events(filter: $filter, first: $first, after: $after, order: $order) {\n      edges {\n        cursor\n        node {\n          id\n          position\n          cursor\n        }\n      }\n      pageInfo {\n        hasNextPage\n        hasPreviousPage\n        startCursor\n        endCursor\n      }\n    }\n  }\n"): (typeof documents)["\n  query ReadEvents($filter: LedgerFilter, $first: Int, $after: String, $order: LedgerOrder) {\n    events(filter: $filter, first: $first, after: $after, order: $order) {\n      edges {\n        cursor\n        node {\n          id\n          position\n          cursor\n        }\n      }\n      pageInfo {\n        hasNextPage\n        hasPreviousPage\n        startCursor\n        endCursor\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ReadCounts($by: LedgerGrouping!, $filter: LedgerFilter) {\n    ledgerCounts(by: $by, filter: $filter) {\n      key\n      events\n      inputTokens\n      outputTokens\n      costUsd\n    }\n  }\n"): (typeof documents)["\n  query ReadCounts($by: LedgerGrouping!, $filter: LedgerFilter) {\n    ledgerCounts(by: $by, filter: $filter) {\n      key\n      events\n      inputTokens\n      outputTokens\n      costUsd\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ReadBlobEvents($sha256: String!, $first: Int, $after: String) {\n    blob(sha256: $sha256) {\n      sha256\n      events(first: $first, after: $after) {\n        edges {\n          cursor\n          node {\n            id\n            payloadSha256\n          }\n        }\n        pageInfo {\n          hasNextPage\n          endCursor\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query ReadBlobEvents($sha256: String!, $first: Int, $after: String) {\n    blob(sha256: $sha256) {\n      sha256\n      events(first: $first, after: $after) {\n        edges {\n          cursor\n          node {\n            id\n            payloadSha256\n          }\n        }\n        pageInfo {\n          hasNextPage\n          endCursor\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ReadNestedEvents($first: Int) {\n    events(first: $first) {\n      edges {\n        node {\n          id\n          payload {\n            sha256\n            size\n          }\n          batch {\n            id\n            collector\n          }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query ReadNestedEvents($first: Int) {\n    events(first: $first) {\n      edges {\n        node {\n          id\n          payload {\n            sha256\n            size\n          }\n          batch {\n            id\n            collector\n          }\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Resolve($query: String!, $minScore: Int, $limit: Int, $types: [String!]) {\n    resolve(query: $query, minScore: $minScore, limit: $limit, types: $types) {\n      query\n      readAs\n      corrections { from to distance }\n      matches { row { name type kind id description } score layer reason matchedWords }\n      message\n    }\n  }\n"): (typeof documents)["\n  query Resolve($query: String!, $minScore: Int, $limit: Int, $types: [String!]) {\n    resolve(query: $query, minScore: $minScore, limit: $limit, types: $types) {\n      query\n      readAs\n      corrections { from to distance }\n      matches { row { name type kind id description } score layer reason matchedWords }\n      message\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n      query ResolveRows {\n        resolve(query: \"send an imessge\", limit: 1) {\n          matches {\n            score\n            row {\n              __typename\n              name\n              section { type versionTag }\n              ... on Tool { runnable contracts(forms: [REST]) { form } }\n            }\n          }\n        }\n      }\n    "): (typeof documents)["\n      query ResolveRows {\n        resolve(query: \"send an imessge\", limit: 1) {\n          matches {\n            score\n            row {\n              __typename\n              name\n              section { type versionTag }\n              ... on Tool { runnable contracts(forms: [REST]) { form } }\n            }\n          }\n        }\n      }\n    "];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;