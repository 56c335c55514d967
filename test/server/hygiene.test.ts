// GraphQL hygiene: limits with clear codes, masked unexpected errors. Generated code in step with the
// schema and the typecheck are their own CI steps (npm run schema:check, npm run typecheck in .ci/run).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';

describe('GraphQL hygiene', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('pglite', { GRAPHQL_MAX_COST: '50', GRAPHQL_MAX_ALIASES: '3', GRAPHQL_MAX_TOKENS: '200' });
  });
  afterAll(async () => t?.stop());

  it('refuses an operation over the cost limit, naming the limit', async () => {
    const fields = 'id kind tool session turn task agent model status method url payloadState';
    const result = await t.gql(`{ a: event(id: "1") { ${fields} action { events { ${fields} action { events { ${fields} } } } } } }`);
    expect(result.errors?.[0]?.extensions?.code).toBe('COST_LIMIT_EXCEEDED');
    expect(result.errors?.[0]?.message).toMatch(/cost limit of 50/i);
  });

  it('refuses too many aliases and too many tokens, naming each limit', async () => {
    const aliases = await t.gql(`{ a: event(id: "1") { id } b: event(id: "2") { id } c: event(id: "3") { id } d: event(id: "4") { id } }`);
    expect(aliases.errors?.[0]?.extensions?.code).toBe('ALIAS_LIMIT_EXCEEDED');
    expect(aliases.errors?.[0]?.message).toMatch(/aliases limit of 3/i);
    const tokens = await t.gql(`{ event(id: "1") { ${'id '.repeat(250)} } }`);
    expect(tokens.errors?.[0]?.extensions?.code).toBe('TOKEN_LIMIT_EXCEEDED');
    expect(tokens.errors?.[0]?.message).toMatch(/token limit of 200/i);
  });

  it('names an unknown field with a code', async () => {
    const result = await t.gql(`{ event(id: "1") { nope } }`);
    expect(result.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(result.errors?.[0]?.message).toContain('Cannot query field "nope"');
  });

  it('masks an unexpected error: no SQL, no internals, a code', async () => {
    await t.db.prisma.$executeRawUnsafe('ALTER TABLE blob RENAME COLUMN codec TO codec_gone');
    try {
      const result = await t.gql(`{ blob(sha256: "${'a'.repeat(64)}") { sha256 codec } }`);
      expect(result.errors).toHaveLength(1);
      expect(result.errors![0]).toMatchObject({ message: 'Unexpected error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } });
      expect(JSON.stringify(result)).not.toMatch(/codec_gone|column|prisma|SELECT/i);
    } finally {
      await t.db.prisma.$executeRawUnsafe('ALTER TABLE blob RENAME COLUMN codec_gone TO codec');
    }
  });
});
