// A payload is scanned for secrets once on the way in: the spool redacts it on the request path and
// the Ledger's pass over the same payload, with the same redactor, takes that result. What is stored
// must be exactly what the Ledger stores when it redacts on its own.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LedgerWriter } from '../../src/capture/writer.ts';
import { Ledger } from '../../src/ledger/ledger.ts';
import { Spool } from '../../src/ledger/spool.ts';
import { SecretRedactor } from '../../src/secrets/redact.ts';
import { parsedEvent } from '../capture/helpers.ts';
import { databaseKinds } from '../helpers/database.ts';
import { createTestLedger, defaultLimits } from '../helpers/ledger.ts';
import { rawSql } from '../helpers/sql.ts';

const secret = 'canary-once-9Zq4Lw7Xk2';

describe('SecretRedactor.remember / recall', () => {
  it('hands a remembered payload out once, for that object only, and keeps no large one', () => {
    const redactor = new SecretRedactor({ CANARY: secret });
    const payload = { state: 'COMPLETE', text: `a ${secret} b` };
    const raw = Buffer.from(payload.text);
    const found = new Set<string>();
    const bytes = redactor.bytes(raw, found);
    redactor.remember(payload, raw, bytes, found);
    expect(redactor.recall({ ...payload })).toBeUndefined();
    expect(redactor.recall(payload)).toEqual({ size: raw.length, bytes: Buffer.from('a [CANARY] b'), found: ['CANARY'] });
    expect(redactor.recall(payload)).toBeUndefined();
    const large = { state: 'COMPLETE', text: 'x'.repeat(64 * 1024) };
    redactor.remember(large, Buffer.from(large.text), Buffer.from(large.text), []);
    expect(redactor.recall(large)).toBeUndefined();
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
