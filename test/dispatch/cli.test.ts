// `dirledger call` as a real child process against a running server (POST /api/dispatch), with its
// token from --token, DIRLEDGER_TOKEN or the config file, and refused without one.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/database.ts';
import { runCli } from '../helpers/process.ts';
import { boundaryPair, eventsOf } from './door-helpers.ts';

describe.each(databaseKinds)('dirledger call on %s', (kind) => {
  let t: TestApp;
  let config: string;
  /** Runs `dirledger call` with the admin token in DIRLEDGER_TOKEN unless env says otherwise; no token file unless a test writes one. */
  async function call(args: string[], env: Record<string, string | undefined> = {}) {
    const child = runCli(['call', ...args], { DIRLEDGER_URL: undefined, DIRLEDGER_TOKEN: t.token, XDG_CONFIG_HOME: config, ...env });
    const { code } = await child.exited;
    return { code, output: child.output() };
  }
  const refusals = async () => {
    await t.app.services.writer.flush();
    return t.app.services.db.prisma.ledgerEvent.findMany({ where: { kind: 'REFUSAL' }, orderBy: { position: 'asc' } });
  };
  beforeAll(async () => {
    t = await startTestApp(kind);
    config = await mkdtemp(path.join(os.tmpdir(), 'dirledger-config-'));
  });
  afterAll(async () => {
    await t?.stop();
    if (config) await rm(config, { recursive: true, force: true });
  });

  it('runs the tool through POST /api/dispatch, prints the DispatchResult and exits 0; the call is recorded', async () => {
    const { code, output } = await call(['ECHO', '--args', '{"text":"from the cli"}', '--url', t.origin]);
    expect(code, output).toBe(0);
    const result = JSON.parse(output);
    expect(result).toMatchObject({ tool: 'ECHO', outcome: 'OK', output: { text: 'from the cli' } });
    const { request, answer } = boundaryPair(await eventsOf(t, result.actionId));
    // The caller is the token's holder (the x-dirledger-caller header names the client only when no token does).
    expect(request).toMatchObject({ metadata: { door: 'DISPATCH', caller: expect.stringMatching(/^token:[0-9a-f]{32}$/) } });
    expect(answer).toMatchObject({ status: '200' });
  });

  it('takes the server from DIRLEDGER_URL, and --dry-run sends nothing', async () => {
    const { code, output } = await call(['ECHO', '--args', '{"text":"dry"}', '--dry-run'], { DIRLEDGER_URL: t.origin });
    expect(code, output).toBe(0);
    expect(JSON.parse(output)).toMatchObject({ tool: 'ECHO', outcome: 'DRY_RUN', dryRun: true });
  });

  it('arguments that look like shell reach the tool as literal text', async () => {
    const text = '; rm -rf / $(touch /tmp/dirledger-pwned) `id` \n next line';
    const { code, output } = await call(['ECHO', '--args', JSON.stringify({ text }), '--url', t.origin]);
    expect(code, output).toBe(0);
    expect(JSON.parse(output).output).toEqual({ text });
  });

  it('exits 1 when the call is refused, printing the result with the field named', async () => {
    const { code, output } = await call(['ECHO', '--args', '{}', '--url', t.origin]);
    expect(code).toBe(1);
    const result = JSON.parse(output);
    expect(result.outcome).toBe('REFUSED');
    expect(result.error.message).toMatch(/text/);
  });

  it('exits 2 on --args that are not a JSON object, before anything is sent', async () => {
    const notJson = await call(['ECHO', '--args', '{text:', '--url', t.origin]);
    expect(notJson.code).toBe(2);
    expect(notJson.output).toMatch(/--args: expected a JSON object, got text that is not JSON/);
    const array = await call(['ECHO', '--args', '[1]', '--url', t.origin]);
    expect(array.code).toBe(2);
    expect(array.output).toMatch(/--args: expected a JSON object, got \[1\]/);
  });

  it('takes the token from --token first, else DIRLEDGER_TOKEN, else $XDG_CONFIG_HOME/dirledger/token', async () => {
    const flag = await call(['ECHO', '--args', '{"text":"flag"}', '--url', t.origin, '--token', t.token], { DIRLEDGER_TOKEN: 'not-a-token' });
    expect(flag.code, flag.output).toBe(0);
    await mkdir(path.join(config, 'dirledger'), { recursive: true });
    await writeFile(path.join(config, 'dirledger', 'token'), `${t.token}\n`);
    try {
      const file = await call(['ECHO', '--args', '{"text":"file"}', '--url', t.origin], { DIRLEDGER_TOKEN: undefined });
      expect(file.code, file.output).toBe(0);
      expect(JSON.parse(file.output).output).toEqual({ text: 'file' });
      // The environment is read before the file.
      const env = await call(['ECHO', '--args', '{"text":"env"}', '--url', t.origin], { DIRLEDGER_TOKEN: 'not-a-token' });
      expect(env.code).toBe(4);
    } finally {
      await rm(path.join(config, 'dirledger'), { recursive: true, force: true });
    }
  });

  it('exits 4 without a token, printing the server’s plain message and where a token is read from; the refusal is recorded', async () => {
    const before = (await refusals()).length;
    const { code, output } = await call(['ECHO', '--args', '{"text":"no token"}', '--url', t.origin], { DIRLEDGER_TOKEN: undefined });
    expect(code).toBe(4);
    expect(output).toContain('UNAUTHENTICATED: Missing or invalid credential.');
    expect(output).toContain(`No token was sent: pass --token, set DIRLEDGER_TOKEN, or write it to ${path.join(config, 'dirledger', 'token')}.`);
    expect(output).not.toContain('no token"');
    const after = await refusals();
    expect(after).toHaveLength(before + 1);
    expect(after.at(-1)).toMatchObject({ status: 'REFUSED', metadata: { limit: 'credential', door: 'DISPATCH', reason: 'no credential was presented' } });
  });

  it('exits 4 when the token may not call the tool, printing the limit', async () => {
    const { code, output } = await call(['ECHO', '--args', '{"text":"x"}', '--url', t.origin, '--token', t.mint('tools = CLOCK')]);
    expect(code).toBe(4);
    expect(output).toContain('FORBIDDEN: This token may not call "ECHO".');
  });

  it('documents the token sources and exit codes in its help', async () => {
    const { code, output } = await call(['--help']);
    expect(code).toBe(0);
    expect(output).toContain('--token <token>');
    expect(output).toContain('$DIRLEDGER_TOKEN, else the file $XDG_CONFIG_HOME/dirledger/token (default ~/.config/dirledger/token)');
    expect(output).toContain('4 refused for its credential');
  });

  it('exits 3 when no server answers', async () => {
    const { code, output } = await call(['ECHO', '--args', '{"text":"x"}', '--url', 'http://127.0.0.1:1']);
    expect(code).toBe(3);
    expect(output).toMatch(/Cannot reach the server at http:\/\/127\.0\.0\.1:1/);
  });
});
