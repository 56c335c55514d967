// GraphQL hygiene: limits with clear codes, masked unexpected errors, generated code in step.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { repoRoot } from '../helpers/process.ts';

const run = promisify(execFile);

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

describe('generated code', () => {
  it('the codegen output for test operations matches schema.graphql (npm run schema:check)', async () => {
    const { stdout } = await run(process.execPath, [`${repoRoot}/node_modules/@graphql-codegen/cli/cjs/bin.js`, '--check', '--silent'], {
      cwd: repoRoot,
    }).catch((error) => {
      throw new Error(`codegen output drifted: run npm run schema:print\n${error.stdout}${error.stderr}`);
    });
    expect(stdout).not.toMatch(/error/i);
  });

  it('the whole project typechecks (tsc --noEmit)', async () => {
    await run(process.execPath, [`${repoRoot}/node_modules/typescript/bin/tsc`, '--noEmit', '-p', repoRoot], { cwd: repoRoot }).catch((error) => {
      throw new Error(`tsc --noEmit failed:\n${error.stdout}`);
    });
  }, 180_000);
});
