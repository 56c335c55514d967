// A recorded Directory read is redacted once on its way in (the spool's pass, which the Ledger takes):
// a secret in its variables, a header, its URL and its identifiers (session, task, agent, turn) is
// replaced in the spool's files, in every column and in every blob, and the read's events still name
// it in redacted_secrets.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeInline } from '../../src/ledger/payload.ts';
import { segmentPattern } from '../../src/ledger/spool-files.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { canaryLeaks } from '../helpers/canary.ts';
import { databaseKinds } from '../helpers/database.ts';
import { rawSql } from '../helpers/sql.ts';

const CANARY = 'rEad-canary/4Hq8Zt1Wm6';

describe.each(databaseKinds)('a recorded read with a secret in it (%s)', (kind) => {
  let t: TestApp;
  let actionId: string;

  beforeAll(async () => {
    t = await startTestApp(kind, { DIRLEDGER_SECRET_CANARY: CANARY });
    const response = await fetch(`${t.url}?k=${encodeURIComponent(CANARY)}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        'x-note': `key ${CANARY}`,
        'x-dirledger-action': 'read-with-secret',
        // Identifiers are stored columns too: replaced in the ledger and in the spool's files alike.
        'x-dirledger-session': `session-${CANARY}`,
        'x-dirledger-task': `task-${CANARY}`,
        'x-dirledger-agent': `agent-${CANARY}`,
        'x-dirledger-turn': `turn-${CANARY}`,
        ...t.auth,
      },
      body: JSON.stringify({
        query: 'query ($name: String!) { tool(name: $name) { name events(first: 2) { edges { node { id } } } } }',
        variables: { name: CANARY },
      }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { tool: null } });
    actionId = 'read-with-secret';
    await t.app.services.writer.flush();
  }, 120_000);

  afterAll(async () => {
    await t?.stop();
  });

  it('records the read whole, with the secret replaced and named', async () => {
    const sql = await rawSql(t.db);
    try {
      const rows = await sql.query<{ kind: string; url: string | null; headers: unknown; redacted_secrets: string[]; payload_sha256: string | null }>(
        'SELECT kind, url, headers, redacted_secrets, payload_sha256 FROM ledger_event WHERE action_id = $1 ORDER BY kind',
        [actionId],
      );
      expect(rows.map((r) => r.kind)).toEqual(['REQUEST', 'RESPONSE']);
      const request = rows[0]!;
      expect(request.redacted_secrets).toEqual(expect.arrayContaining(['CANARY', 'DIRLEDGER_TOKEN']));
      expect(request.url).toContain('k=[CANARY]');
      const [ids] = await sql.query<{ session: string; task: string; agent: string; turn: string }>(
        'SELECT session, task, agent, turn FROM ledger_event WHERE action_id = $1 AND kind = $2',
        [actionId, 'REQUEST'],
      );
      expect(ids).toEqual({ session: 'session-[CANARY]', task: 'task-[CANARY]', agent: 'agent-[CANARY]', turn: 'turn-[CANARY]' });
      expect((request.headers as Record<string, string>)['x-note']).toBe('key [CANARY]');
      const body = (await t.app.services.ledger.readBlob(request.payload_sha256!))!.toString('utf8');
      expect(JSON.parse(body)).toMatchObject({ variables: { name: '[CANARY]' } });
    } finally {
      await sql.close();
    }
  });

  it('leaves it in no column, no blob and no spool file', async () => {
    const sql = await rawSql(t.db);
    try {
      const events = await sql.query<{ r: string }>('SELECT row_to_json(e)::text AS r FROM ledger_event e');
      expect(events.length).toBeGreaterThanOrEqual(2);
      for (const { r } of events) expect(canaryLeaks(r, CANARY), r).toEqual([]);
      const blobs = await sql.query<{ sha256: string; codec: string; data: Uint8Array }>('SELECT sha256, codec, data FROM blob');
      for (const blob of blobs) expect(canaryLeaks(await decodeInline(blob.codec, blob.data), CANARY), blob.sha256).toEqual([]);
    } finally {
      await sql.close();
    }
    const dir = path.join(t.dataDir, 'spool');
    const files = (await readdir(dir)).filter((f) => segmentPattern.test(f));
    const spooled = await Promise.all(files.map((file) => readFile(path.join(dir, file))));
    // The read went through the spool: its request, with the secret's name where the secret was.
    expect(spooled.some((bytes) => bytes.includes('read-with-secret:door:request') && bytes.includes('key [CANARY]'))).toBe(true);
    for (const [i, bytes] of spooled.entries()) expect(canaryLeaks(bytes, CANARY), files[i]).toEqual([]);
  });
});
