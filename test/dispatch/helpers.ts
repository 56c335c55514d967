// A Directory of test tools pointing at real local servers, and an app that serves it.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import type { DatabaseKind } from '../helpers/database.ts';

export type ToolRow = { name: string; way: unknown; args?: unknown; kind?: string; description?: string; column?: string };

export async function writeDirectory(rows: ToolRow[]): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dirledger-dispatch-dir-'));
  const entries = rows.map((r) => ({
    name: r.name,
    description: r.description ?? `test tool ${r.name}`,
    [r.column ?? 'way']: JSON.stringify(r.way),
    'args schema': r.args === undefined ? '' : JSON.stringify(r.args),
    kind: r.kind ?? 'test',
  }));
  await writeFile(path.join(dir, 'tool.json'), JSON.stringify(entries));
  return dir;
}

export type DispatchApp = TestApp & {
  directoryDir: string;
  /** Events of one action, in position order, after the background writer has flushed. */
  events(actionId: string): Promise<any[]>;
  post(pathname: string, body: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any; headers: Headers }>;
};

export async function startDispatchApp(
  kind: DatabaseKind,
  rows: ToolRow[],
  env: Record<string, string> = {},
  options: Parameters<typeof startTestApp>[2] = {},
): Promise<DispatchApp> {
  const directoryDir = await writeDirectory(rows);
  const app = await startTestApp(kind, { DIRECTORY_DIR: directoryDir, DIRECTORY_WATCH_MS: '0', ...env }, options);
  return {
    ...app,
    directoryDir,
    async events(actionId) {
      await app.app.services.writer.flush();
      return app.app.services.db.prisma.ledgerEvent.findMany({ where: { actionId }, orderBy: { position: 'asc' } });
    },
    async post(pathname, body, headers = {}) {
      const response = await fetch(`${app.origin}${pathname}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...app.auth, ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        /* text */
      }
      return { status: response.status, body: parsed, headers: response.headers };
    },
    async stop() {
      await app.stop();
      await rm(directoryDir, { recursive: true, force: true });
    },
  };
}
