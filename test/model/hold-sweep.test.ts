// A crash between a budget's hold and its settle: a real server process is SIGKILLed while a budgeted
// call waits on its upstream. The next start gives the hold back once the call is surely over (its
// timeout, spool wait and margin past), with a BUDGET_RELEASE row linked to the call saying so.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../../src/app.ts';
import { Authority } from '../../src/auth/authority.ts';
import { mintWithRootKey } from '../../src/auth/tokens.ts';
import { withRootKey } from '../../src/auth/root-key.ts';
import { parseConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { until } from '../capture/helpers.ts';
import { seedPgliteFolder } from '../helpers/database.ts';
import { runCli, type Child } from '../helpers/process.ts';
import { modelDirectory, UPSTREAM_KEY } from './helpers.ts';

describe('a budget hold left by a crash', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const c of cleanup.reverse()) await c().catch(() => {});
  });

  it('is given back after the call is surely over, and the ledger says so', async () => {
    // An upstream that takes the call and never answers.
    let received = 0;
    const hung: Server = createServer((req) => {
      req.resume();
      received++;
    });
    await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
    cleanup.push(
      () =>
        new Promise((resolve) => {
          hung.closeAllConnections();
          hung.close(resolve);
        }),
    );
    const directory = await modelDirectory(`http://127.0.0.1:${(hung.address() as AddressInfo).port}`);
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'dirledger-hold-'));
    cleanup.push(
      () => rm(directory, { recursive: true, force: true }),
      () => rm(dataDir, { recursive: true, force: true }),
    );
    await seedPgliteFolder(path.join(dataDir, 'pglite'));
    const env = {
      DATA_DIR: dataDir,
      DIRECTORY_DIR: directory,
      DIRECTORY_WATCH_MS: '0',
      DIRLEDGER_SECRET_OPENAI_API_KEY: UPSTREAM_KEY,
      MODEL_TIMEOUT_MS: '4000',
      SPOOL_WAIT_MS: '1000',
      AUTH_RATE_PER_SECOND: '0',
    };
    const admin = mintWithRootKey(withRootKey(parseConfig(env)).rootKey);
    const budgeted = Authority.narrow(admin, ['cost <= 1']);

    const child: Child = runCli(['serve'], { ...env, PORT: '0', LOG_LEVEL: 'warn' });
    cleanup.push(async () => {
      if (child.child.exitCode === null && child.child.signalCode === null) child.child.kill('SIGKILL');
      await child.exited;
    });
    const [, url] = await child.waitFor(/GraphiQL at (http:\/\/\S+)\/graphql/, 150_000);
    const actionId = `hold-crash-${Date.now()}`;
    void fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${budgeted}`, 'x-dirledger-action': actionId },
      body: JSON.stringify({ model: 'fake-gpt', max_tokens: 50, messages: [{ role: 'user', content: 'never answered' }] }),
    }).catch(() => {});
    await until(() => received === 1, 'the upstream to receive the call', 60_000);
    child.child.kill('SIGKILL');
    await child.exited;

    const app: App = await buildApp(parseConfig({ ...env, PORT: '0', LOG_LEVEL: 'silent' }), { logger: createLogger('silent') });
    cleanup.push(() => app.stop());
    const { url: graphql } = await app.start(0, '127.0.0.1');
    const prisma = app.services.db.prisma;
    // Released at start when the call's time is already past, else by the next sweep.
    let release: Awaited<ReturnType<typeof prisma.ledgerEvent.findMany>>[number] | undefined;
    await until(
      async () => {
        await app.services.writer.flush();
        release = (await prisma.ledgerEvent.findMany({ where: { actionId, kind: 'BUDGET_RELEASE' } }))[0];
        return release !== undefined;
      },
      'the release of the hold',
      60_000,
    );
    const call = await prisma.ledgerEvent.findMany({ where: { actionId }, orderBy: { position: 'asc' } });
    // The call was recorded as sent before the crash, and never answered.
    expect(call.map((e) => e.kind)).toEqual(['REQUEST', 'MODEL_CALL', 'BUDGET_RELEASE']);
    const hold = (call[1]!.metadata as any).hold as { costUsd: string };
    expect(Number(hold.costUsd)).toBeGreaterThan(0);
    const heldAt = Date.parse((release!.metadata as any).heldAt);
    const overBy = Date.parse((release!.metadata as any).overBy);
    expect(overBy - heldAt).toBe(4000 + 1000 + 5000);
    expect(release!.occurredAt.getTime()).toBeGreaterThanOrEqual(overBy);
    expect(release).toMatchObject({
      direction: 'IN',
      status: 'RELEASED',
      model: 'fake-gpt',
      metadata: { capture: 'authority', released: [{ unit: 'cost', amount: hold.costUsd }], reason: expect.stringMatching(/never settled/) },
    });
    // The budget holds nothing and spent nothing: the call never came back.
    const inspected = await fetch(graphql, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` },
      body: JSON.stringify({ query: 'query($t: String!) { inspectToken(token: $t) { budgets { spent held left } } }', variables: { t: budgeted } }),
    });
    expect(((await inspected.json()) as any).data.inspectToken.budgets).toEqual([{ spent: '0.0000000000', held: '0.0000000000', left: '1.0000000000' }]);
    expect(await prisma.tokenSpendHold.count()).toBe(0);
  }, 900_000);
});
