import { openDatabase } from './db/client.ts';
import { Ledger } from './ledger/ledger.ts';
import { FolderObjectStore } from './ledger/object-store.ts';
import { SecretRedactor } from './ledger/redact.ts';
import { BatchInput } from './ledger/input.ts';
import { parseInput } from './validation.ts';
for (const target of [{ memory: true } as const, { url: 'postgresql://postgres@127.0.0.1:5432/tmp_a' }]) {
  if ('url' in target) { const a = await openDatabase({url:'postgresql://postgres@127.0.0.1:5432/postgres'}); await a.prisma.$executeRawUnsafe('drop database if exists tmp_a'); await a.prisma.$executeRawUnsafe('create database tmp_a'); await a.close(); }
  const db = await openDatabase(target);
  await db.migrate();
  const ledger = new Ledger(db.prisma, new FolderObjectStore('/tmp/blobs'), new SecretRedactor({ API_KEY: 'sk-supersecret-1' }), { inlineMaxBytes: 262144, payloadMaxBytes: 8388608 });
  const batch = parseInput(BatchInput, { collector: 'c1', position: 5, events: [
    { id: 'e1', kind: 'REQUEST', direction: 'IN', actionId: 'a1', occurredAt: new Date().toISOString(), url: 'http://x/?key=sk-supersecret-1', payload: { state: 'COMPLETE', text: '{"k":"sk-supersecret-1"}' }, costUsd: '0.0001' },
    { id: 'e2', kind: 'RESPONSE', direction: 'OUT', actionId: 'a1', occurredAt: new Date().toISOString(), payload: { state: 'COMPLETE', base64: Buffer.from([0xff, 0, 1]).toString('base64') } },
    { id: 'e3', kind: 'RESPONSE', direction: 'OUT', actionId: 'a1', occurredAt: new Date().toISOString() },
  ]}, 'batch');
  console.log(await ledger.append(batch));
  console.log(await ledger.append(batch));
  console.log(await db.prisma.ledgerEvent.findMany({ select: { id: true, position: true, url: true, redactedSecrets: true, payloadSha256: true, payloadEncoding: true, costUsd: true } }));
  console.log(await db.prisma.ledgerBatch.findMany());
  const e = await db.prisma.ledgerEvent.findUnique({ where: { id: 'e1' } });
  console.log((await ledger.readBlob(e!.payloadSha256!))!.toString());
  try { await db.prisma.$executeRawUnsafe("update ledger_event set kind='x'"); } catch (err) { console.log('refused:', (err as Error).message); }
  await db.close();
}
process.exit(0);
