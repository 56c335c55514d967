// `dirledger call` as a real child process against a running server (POST /api/dispatch).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/database.ts';
import { runCli } from '../helpers/process.ts';
import { boundaryPair, eventsOf } from './door-helpers.ts';

async function call(args: string[], env: Record<string, string | undefined> = {}) {
  const child = runCli(['call', ...args], { DIRLEDGER_URL: undefined, ...env });
  const { code } = await child.exited;
  return { code, output: child.output() };
}

describe.each(databaseKinds)('dirledger call on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind);
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('runs the tool through POST /api/dispatch, prints the DispatchResult and exits 0; the call is recorded', async () => {
    const { code, output } = await call(['ECHO', '--args', '{"text":"from the cli"}', '--url', t.origin]);
    expect(code, output).toBe(0);
    const result = JSON.parse(output);
    expect(result).toMatchObject({ tool: 'ECHO', outcome: 'OK', output: { text: 'from the cli' } });
    const { request, answer } = boundaryPair(await eventsOf(t, result.actionId));
    expect(request).toMatchObject({ metadata: { door: 'DISPATCH', caller: 'dirledger call' } });
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

  it('exits 3 when no server answers', async () => {
    const { code, output } = await call(['ECHO', '--args', '{"text":"x"}', '--url', 'http://127.0.0.1:1']);
    expect(code).toBe(3);
    expect(output).toMatch(/Cannot reach the server at http:\/\/127\.0\.0\.1:1/);
  });
});
