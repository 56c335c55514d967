// `dirledger tail` as a real child process against a real server: replay from a cursor, filter, live;
// its token in connection_init, and refused without one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { batch, event } from '../helpers/ledger.ts';
import { runCli } from '../helpers/process.ts';
import { encodeCursor } from '../../src/ledger/cursor.ts';
import { waitFor } from './helpers.ts';

describe('dirledger tail', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('pglite', { LIVE_POLL_MS: '60000' });
  });
  afterAll(() => t.stop());

  it('prints the events of a tool after a cursor, then live ones, and stops at --limit', async () => {
    const first = await t.app.services.ledger.append(
      batch('cli', [event('c1', { tool: 'grep' }), event('c2', { tool: 'other' }), event('c3', { tool: 'grep' })]),
    );
    const after = encodeCursor(first.appended[0]!.position);
    const child = runCli(['tail', '--tool', 'grep', '--after', after, '--url', t.origin, '--json', '--limit', '2'], { DIRLEDGER_TOKEN: t.token });
    await child.waitFor(/"id":"c3"/);
    await waitFor(() => t.app.services.live.stats().following === 1, 'the CLI following live');
    await t.app.services.ledger.append(batch('cli', [event('c4', { tool: 'other' }), event('c5', { tool: 'grep' })]));
    const { code } = await child.exited;
    expect(code).toBe(0);
    const lines = child
      .output()
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.id)).toEqual(['c3', 'c5']);
  }, 60_000);

  it('without --json: a header names the columns once, above the first event', async () => {
    const first = await t.app.services.ledger.append(batch('cli', [event('h1', { tool: 'headed' }), event('h2', { tool: 'headed' })]));
    const after = encodeCursor(first.appended[0]!.position - 1n);
    const child = runCli(['tail', '--tool', 'headed', '--after', after, '--url', t.origin, '--limit', '2'], { DIRLEDGER_TOKEN: t.token });
    expect((await child.exited).code).toBe(0);
    const lines = child.output().trim().split('\n');
    expect(lines[0]).toMatch(/^\s*POSITION\s+OCCURRED AT\s+DIR KIND\s+TOOL\s+STATUS\s+EVENT ID\s+PAYLOAD\s+CURSOR$/);
    expect(lines.slice(1).map((l) => l.includes('headed'))).toEqual([true, true]);
    expect(lines.filter((l) => l.includes('POSITION'))).toHaveLength(1);
  }, 60_000);

  it('refuses a bad cursor with exit code 2', async () => {
    const child = runCli(['tail', '--after', 'nope', '--url', t.origin, '--token', t.token]);
    const { code } = await child.exited;
    expect(code).toBe(2);
    expect(child.output()).toContain('BAD_INPUT');
  }, 60_000);

  it('without a token: refused at connection_init, recorded, the reason printed, exit 4 (no retrying)', async () => {
    const child = runCli(['tail', '--url', t.origin], { DIRLEDGER_TOKEN: undefined, XDG_CONFIG_HOME: t.dataDir });
    const { code } = await child.exited;
    expect(code).toBe(4);
    expect(child.output()).toContain(
      'UNAUTHENTICATED: the server closed the connection (4403 Forbidden): missing or invalid credential. No token was sent: pass --token, set DIRLEDGER_TOKEN',
    );
    await t.app.services.writer.flush();
    const refusals = await t.app.services.db.prisma.ledgerEvent.findMany({ where: { kind: 'REFUSAL' } });
    expect(refusals.map((r) => r.metadata)).toEqual([
      expect.objectContaining({ door: 'GRAPHQL_WS', limit: 'credential', reason: 'no credential was presented' }),
    ]);
  }, 60_000);
});
