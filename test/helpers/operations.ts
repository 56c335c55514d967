// Operations shared across test files, typed by codegen (npm run schema:print regenerates test/gql).
import { graphql } from '../gql/index.ts';

export const AppendBatch = graphql(`
  mutation AppendBatch($input: AppendBatchInput!) {
    appendBatch(input: $input) {
      batchId
      received
      inserted
      duplicates
      position
    }
  }
`);

export const EventById = graphql(`
  query EventById($id: ID!) {
    event(id: $id) {
      id
      position
      cursor
      kind
      direction
      actionId
      toolName
      costUsd
      payloadState
      payloadSha256
      payloadSize
      payloadEncoding
      redactedSecrets
      url
      headers
      payload {
        sha256
        size
        encoding
        storage
        codec
        text
        base64
      }
    }
  }
`);
