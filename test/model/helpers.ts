// A Directory of model rows pointing at a fake upstream (real HTTP, both wire formats), and an app serving it.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { SpoolIo } from '../../src/ledger/spool-files.ts';
import { startFakeUpstream, type FakeUpstream } from '../../src/model/fake-upstream.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import type { DatabaseKind } from '../helpers/database.ts';

/** The key the keyed rows' upstream expects; registered as a secret, so it must never be stored. */
export const UPSTREAM_KEY = 'sk-canary-MODEL-upstream-7f3a9c1e5b';

export type ModelApp = TestApp & {
  fake: FakeUpstream;
  /** Events of one action, in position order, once the writer flushed and (when asked) the answer IN is in. */
  events(actionId: string, kinds?: string[]): Promise<any[]>;
  payloadText(sha256: string | null): Promise<string | null>;
};

const csv = (v: string) => `"${v.replaceAll('"', '""')}"`;

export async function modelDirectory(origin: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dirledger-models-'));
  const rows = [
    [
      'fake-gpt',
      'openai',
      { method: 'POST', url: `${origin}/openai/v1`, headers: { authorization: 'Bearer [OPENAI_API_KEY]' } },
      '',
      '0.15',
      '0.60',
      '0.075',
      '16384',
    ],
    [
      'fake-claude-sonnet',
      'anthropic',
      { method: 'POST', url: `${origin}/anthropic/v1`, headers: { 'x-api-key': '[OPENAI_API_KEY]' } },
      'claude-upstream-id',
      '3',
      '15',
      '0.30',
      '64000',
    ],
    ['fake-embed', 'openai', { method: 'POST', url: `${origin}/openai/v1` }, '', '0.02', '0', '0.02', ''],
    ['unbound-gpt', 'openai', { method: 'POST', url: `${origin}/openai/v1`, headers: { authorization: 'Bearer [NOT_BOUND_KEY]' } }, '', '1', '1', '1', ''],
    ['fake-unbounded', 'openai', { method: 'POST', url: `${origin}/openai/v1` }, '', '1', '2', '0.5', ''],
  ];
  const header = 'name,description,provider,upstream,upstream model,input price,output price,cached price,max output,price date,context window';
  const lines = rows.map(([name, provider, upstream, upstreamModel, input, output, cached, maxOutput]) =>
    [name, csv(`test model ${name}`), provider, csv(JSON.stringify(upstream)), upstreamModel, input, output, cached, maxOutput, '2026-12-01', '128000'].join(
      ',',
    ),
  );
  await writeFile(path.join(dir, 'model.csv'), `${header}\n${lines.join('\n')}\n`);
  return dir;
}

export async function startModelApp(kind: DatabaseKind = 'pglite', env: Record<string, string> = {}, options: { spoolIo?: SpoolIo } = {}): Promise<ModelApp> {
  const fake = await startFakeUpstream();
  const dir = await modelDirectory(fake.origin);
  const app = await startTestApp(kind, { DIRECTORY_DIR: dir, DIRECTORY_WATCH_MS: '0', DIRLEDGER_SECRET_OPENAI_API_KEY: UPSTREAM_KEY, ...env }, options);
  const prisma = app.app.services.db.prisma;
  return {
    ...app,
    fake,
    async events(actionId, kinds = ['RESPONSE', 'MODEL_RESULT']) {
      for (let attempt = 0; attempt < 100; attempt++) {
        await app.app.services.writer.flush();
        const events = await prisma.ledgerEvent.findMany({ where: { actionId }, orderBy: { position: 'asc' } });
        if (kinds.every((k) => events.some((e) => e.kind === k))) return events;
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error(`action ${actionId} never recorded ${kinds.join(', ')}`);
    },
    async payloadText(sha256) {
      if (!sha256) return null;
      return (await app.app.services.ledger.readBlob(sha256))?.toString('utf8') ?? null;
    },
    async stop() {
      await app.stop();
      await fake.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
