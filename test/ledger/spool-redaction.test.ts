// An event is scanned for secrets once on the way in: the spool redacts its url, headers, metadata and
// payload on the request path and the Ledger, with the same redactor, takes that result for the same
// event object. What is stored must be exactly what the Ledger stores when it redacts on its own, and
// nothing that did not pass through that scan is ever taken as redacted.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LedgerWriter } from '../../src/capture/writer.ts';
import { Ledger } from '../../src/ledger/ledger.ts';
import { redactForSpool, storedColumns, takeRedacted } from '../../src/ledger/redacted-event.ts';
import { Spool } from '../../src/ledger/spool.ts';
import { SecretRedactor } from '../../src/secrets/redact.ts';
import { parsedEvent } from '../capture/helpers.ts';
import { databaseKinds } from '../helpers/database.ts';
import { createTestLedger, defaultLimits } from '../helpers/ledger.ts';
import { rawSql } from '../helpers/sql.ts';

const secret = 'canary-once-9Zq4Lw7Xk2';

describe('redactForSpool / takeRedacted', () => {
  const redactor = new SecretRedactor({ CANARY: secret });
  const withSecret = () =>
    parsedEvent('sealed', {
      url: `https://x.example/?k=${secret}`,
      headers: { 'x-key': secret },
      metadata: { note: secret },
      payload: { state: 'COMPLETE', text: `a ${secret} b` },
    });

  it('hands the columns out once, to the redactor that made them, for that object only', () => {
    const event = withSecret();
    const onDisk = redactForSpool(event, redactor);
    expect(JSON.stringify(onDisk)).not.toContain(secret);
    expect(takeRedacted({ ...event }, redactor)).toBeUndefined();
    expect(takeRedacted(event, new SecretRedactor({ CANARY: secret }))).toBeUndefined();
    const taken = takeRedacted(event, redactor)!;
    expect(taken).toMatchObject({
      url: 'https://x.example/?k=[CANARY]',
      headers: '{"x-key":"[CANARY]"}',
      metadata: '{"note":"[CANARY]"}',
      found: ['CANARY'],
      payload: { size: Buffer.byteLength(`a ${secret} b`), bytes: Buffer.from('a [CANARY] b'), found: ['CANARY'] },
    });
    expect(takeRedacted(event, redactor)).toBeUndefined();
  });

  it('gives the columns the Ledger computes alone: values it must escape, other spellings, a secret split across a key and its value', () => {
    const [head, tail] = [secret.slice(0, 9), secret.slice(9)];
    const cases = [
      parsedEvent('nul', { url: `https://x.example/${secret}\u0000`, headers: { 'x-nul': `\u0000${secret}` }, metadata: { [`k\u0000${secret}`]: [1] } }),
      parsedEvent('split', { headers: { [head]: tail }, metadata: { [head]: tail } }),
      parsedEvent('spelled', { url: `https://x.example/?k=${encodeURIComponent(secret)}`, metadata: { hex: Buffer.from(secret).toString('hex') } }),
      parsedEvent('clean', { url: 'https://x.example/', headers: { accept: 'text/plain' }, metadata: { n: 1 } }),
      parsedEvent('bare'),
    ];
    for (const event of cases) {
      const alone = new Set<string>();
      const expected = storedColumns(event, redactor, alone);
      redactForSpool(event, redactor);
      const { payload: _payload, found, ...columns } = takeRedacted(event, redactor)!;
      expect(columns, event.id).toEqual(expected);
      expect(new Set(found), event.id).toEqual(alone);
      expect(JSON.stringify(columns), event.id).not.toContain(secret);
    }
  });
});

describe.each(databaseKinds)('a payload redacted by the spool, then stored (%s)', (kind) => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'dirledger-spool-redaction-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('is stored with the very bytes and names the Ledger stores when it redacts alone (small, large, binary, clean)', async () => {
    const t = await createTestLedger(kind);
    const sql = await rawSql(t.db);
    const redactor = new SecretRedactor({ CANARY: secret });
    const ledger = new Ledger(t.db.prisma, t.objects, redactor, defaultLimits);
    const { spool } = await Spool.open({ dir, maxBytes: 1 << 30, maxEvents: 100_000, redactor });
    const writer = new LedgerWriter(ledger, { spool, batchMaxDelayMs: 5, collector: 'spooled' });
    try {
      const payloads = {
        small: { state: 'COMPLETE', text: `{"key":"${secret}","n":1}` },
        large: { state: 'COMPLETE', text: `${'p'.repeat(40_000)} ${secret} end` },
        binary: { state: 'COMPLETE', base64: Buffer.concat([Buffer.from([0, 0xff]), Buffer.from(secret), Buffer.from([0x80])]).toString('base64') },
        clean: { state: 'PARTIAL', text: 'nothing secret here' },
      };
      const names = Object.keys(payloads) as (keyof typeof payloads)[];
      await writer.enqueue(names.map((name) => parsedEvent(`via-spool-${name}`, { payload: payloads[name] })));
      await writer.flush();
      // The same events appended straight to the Ledger: it scans them itself.
      await ledger.append({ collector: 'direct', events: names.map((name) => parsedEvent(`direct-${name}`, { payload: payloads[name] })) });
      const rows = await sql.query<{ id: string; payload_sha256: string; payload_size: string; redacted_secrets: string[] }>(
        `SELECT id, payload_sha256, payload_size::text, redacted_secrets FROM ledger_event WHERE id LIKE 'via-spool-%' OR id LIKE 'direct-%' ORDER BY id`,
      );
      const byId = new Map(rows.map((r) => [r.id, r]));
      for (const name of names) {
        const spooled = byId.get(`via-spool-${name}`)!;
        const direct = byId.get(`direct-${name}`)!;
        expect({ ...spooled, id: undefined }, name).toEqual({ ...direct, id: undefined });
        expect(spooled.redacted_secrets, name).toEqual(name === 'clean' ? [] : ['CANARY']);
      }
      for (const name of names) {
        const stored = (await ledger.readBlob(byId.get(`via-spool-${name}`)!.payload_sha256))!;
        expect(stored.includes(secret), name).toBe(false);
      }
    } finally {
      await writer.stop(1_000);
      await spool.close();
      await sql.close();
      await t.stop();
    }
  });
});
