// The spool writes a lone call's records on the event loop's own thread (cheaper than the thread pool's
// round trip) only while one caller is being served: many callers answered without I/O, each served whole
// before the next is read, share group-committed writes through the pool instead of one blocking write each.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultIo, type SpoolIo } from '../../src/ledger/spool-files.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/database.ts';

const run = promisify(execFile);

/** The real file operations, counting writes made in place and through the pool. */
function countingIo() {
  const counts = { inPlace: 0, pool: 0 };
  const io: SpoolIo = {
    ...defaultIo,
    write: (...a) => (counts.pool++, defaultIo.write(...a)),
    writev: (...a) => (counts.pool++, defaultIo.writev!(...a)),
    writeNow: (...a) => (counts.inPlace++, defaultIo.writeNow!(...a)),
    writevNow: (...a) => (counts.inPlace++, defaultIo.writevNow!(...a)),
  };
  return { io, counts, reset: () => Object.assign(counts, { inPlace: 0, pool: 0 }) };
}

describe.each(databaseKinds)('durable writes in place or through the pool (%s)', (kind) => {
  let t: TestApp;
  const io = countingIo();
  const resolve = `/api/directory/resolve?q=echo`;

  beforeAll(async () => {
    // Lingering requests wait for their answer's write, so each answer is exactly one write.
    t = await startTestApp(kind, { SPOOL_LINGER_MS: '600000' }, { spoolIo: io.io });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('a caller alone (one request at a time on a kept-alive connection): each answer is written in place', async () => {
    io.reset();
    for (let i = 0; i < 5; i++) {
      const response = await fetch(`${t.origin}${resolve}`, { headers: t.auth });
      expect(response.status).toBe(200);
      await response.arrayBuffer();
    }
    expect(io.counts).toEqual({ inPlace: 5, pool: 0 });
  });

  it('32 callers at once from another process: their answers share a few group-committed writes, nearly none in place', async () => {
    io.reset();
    // A client in this process cannot send while the server blocks in a write, so the callers run in a process of their own.
    const callers = `
      const http = require('node:http');
      const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
      const one = () => new Promise((done, fail) => {
        http.get(process.argv[1], { agent, headers: JSON.parse(process.argv[2]) }, (r) => { r.resume(); r.on('end', () => done(r.statusCode)); }).on('error', fail);
      });
      (async () => {
        const statuses = [];
        for (let round = 0; round < 4; round++) statuses.push(...(await Promise.all(Array.from({ length: 32 }, one))));
        process.stdout.write(JSON.stringify(statuses));
        agent.destroy();
      })();`;
    const { stdout } = await run(process.execPath, ['-e', callers, `${t.origin}${resolve}`, JSON.stringify(t.auth)]);
    const statuses = JSON.parse(stdout) as number[];
    expect(statuses).toEqual(Array(128).fill(200));
    // Before, a caller answered without I/O was served whole before the next one was read, so each looked
    // alone: 128 writes, all in place. Now at most the first answer of a turn of the event loop is.
    expect(io.counts.inPlace).toBeLessThanOrEqual(16);
    expect(io.counts.inPlace + io.counts.pool).toBeLessThanOrEqual(64);
  });
});
