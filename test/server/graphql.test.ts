import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import { printedSchema } from '../../src/graphql/schema.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

describe('the server', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('pglite');
  });
  afterAll(async () => t?.stop());

  it('answers the health check without recording anything', async () => {
    const response = await fetch(`${t.origin}/healthz`);
    expect(response.status).toBe(200);
    const health = await response.json();
    expect(health).toMatchObject({ ok: true, database: 'pglite', spool: { mode: 'durable', events: 0, bytes: 0, oldestAgeMs: 0 } });
    expect(health.memory.rssBytes).toBeGreaterThan(health.memory.heapUsedBytes);
    expect(health.memory.heapUsedBytes).toBeGreaterThan(0);
    expect(health.disk.databaseBytes).toBeGreaterThan(1_000_000);
    expect(health.disk.blobFolderBytes).toBeGreaterThanOrEqual(0);
  });

  it('appends a batch over GraphQL and reads the event back with its payload', async () => {
    const appended = await t.gql(`mutation($input: AppendBatchInput!) { appendBatch(input: $input) { received inserted duplicates position } }`, {
      input: {
        collector: 'smoke',
        position: '7',
        events: [
          {
            id: 'smoke-1',
            kind: 'TOOL_CALL',
            direction: 'IN',
            actionId: 'act-1',
            tool: 'ECHO',
            occurredAt: '2026-11-30T00:00:00Z',
            costUsd: '0.0012345678',
            payload: { state: 'COMPLETE', text: '{"hello":"world"}' },
          },
        ],
      },
    });
    expect(appended).toEqual({ data: { appendBatch: { received: 1, inserted: 1, duplicates: 0, position: '7' } } });
    const read = await t.gql(`{ event(id: "smoke-1") { id toolName costUsd payloadState payload { text encoding sha256 } action { events { id } } } }`);
    expect(read.errors).toBeUndefined();
    expect(read.data.event).toMatchObject({
      id: 'smoke-1',
      toolName: 'ECHO',
      costUsd: '0.0012345678',
      payloadState: 'COMPLETE',
      payload: { text: '{"hello":"world"}', encoding: 'UTF8' },
      action: { events: [{ id: 'smoke-1' }] },
    });
  });

  it('refuses an invalid batch with BAD_INPUT naming the field', async () => {
    const result = await t.gql(
      `mutation { appendBatch(input: { collector: "c", events: [{ id: "x", kind: "K", direction: IN, actionId: "a", occurredAt: "2026-11-30T00:00:00Z", payload: { state: COMPLETE } }] }) { inserted } }`,
    );
    expect(result.errors?.[0]?.extensions?.code).toBe('BAD_INPUT');
    expect(result.errors?.[0]?.message).toContain('events[0].payload.text');
  });

  it('masks unexpected errors and codes depth-limit refusals', async () => {
    const deep = `{ event(id: "smoke-1") { ${'action { events { '.repeat(6)}id${' } }'.repeat(6)} } }`;
    const result = await t.gql(deep);
    expect(result.errors?.[0]?.extensions?.code).toBe('DEPTH_LIMIT_EXCEEDED');
    expect(result.errors?.[0]?.message).toMatch(/depth limit of 12/);
  });

  it('commits the printed, sorted schema (schema.graphql has not drifted)', async () => {
    expect(await readFile(new URL('../../schema.graphql', import.meta.url), 'utf8')).toBe(printedSchema());
  });
});
