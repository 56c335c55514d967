import { EventEmitter, once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { bindToInvocation, currentInvocation, InvocationInput, runInInvocation, withoutOutboundCapture } from '../../src/context/request.ts';
import { DomainError } from '../../src/errors.ts';

describe('invocation context', () => {
  it('generates an action id when absent, keeps the given one, and defaults outbound capture on', () => {
    const generated = runInInvocation({ door: 'REST' }, () => currentInvocation());
    expect(generated?.actionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(generated?.captureOutbound).toBe(true);
    const given = runInInvocation({ door: 'MCP', actionId: 'act-1', session: 's', turn: 't', task: 'k', agent: 'a', caller: 'c' }, () => currentInvocation());
    expect(given).toMatchObject({ actionId: 'act-1', session: 's', turn: 't', task: 'k', agent: 'a', caller: 'c', door: 'MCP', captureOutbound: true });
    expect(Object.isFrozen(given)).toBe(true);
  });

  it('refuses an invalid context with BAD_INPUT naming the field', () => {
    const attempt = () => runInInvocation({ door: 'REST', session: '' }, () => 1);
    expect(attempt).toThrow(DomainError);
    expect(attempt).toThrow(/session/);
    expect(() => runInInvocation({ door: 'NOPE' as 'REST' }, () => 1)).toThrow(/door/);
    expect(() => runInInvocation({ door: 'REST', actionId: 'x'.repeat(257) }, () => 1)).toThrow(/actionId/);
  });

  it('takes exactly the contexts the InvocationInput schema takes (its fast path checked against zod)', () => {
    const label = fc.oneof(fc.string({ maxLength: 3 }), fc.string({ minLength: 255, maxLength: 258 }), fc.string({ minLength: 510, maxLength: 514 }));
    const value = fc.oneof(label, fc.constant(undefined), fc.constant(null), fc.boolean(), fc.integer(), fc.constant({}), fc.constant([]));
    const keys = ['door', 'actionId', 'session', 'turn', 'task', 'agent', 'caller', 'grant', 'captureOutbound', 'answerWaitsForRecord', 'extra'];
    // A valid context, then up to two of its keys set to anything: most cases sit at the edge of valid.
    const valid = fc.record(
      {
        door: fc.constantFrom('REST', 'MCP', 'INTERNAL'),
        actionId: fc.string({ minLength: 1, maxLength: 256 }),
        session: fc.string({ minLength: 1, maxLength: 512 }),
        turn: fc.string({ minLength: 1, maxLength: 512 }),
        caller: fc.string({ minLength: 1, maxLength: 512 }),
        captureOutbound: fc.boolean(),
      },
      { requiredKeys: ['door'] },
    );
    const input = fc
      .tuple(
        valid,
        fc.array(fc.tuple(fc.constantFrom(...keys), fc.oneof(value, fc.constantFrom('REST', 'rest', 'NOPE', ''), fc.constant({ caller: 'g' }))), {
          maxLength: 2,
        }),
      )
      .map(([base, changes]) => Object.assign({ ...base }, Object.fromEntries(changes)) as Record<string, unknown>);
    fc.assert(
      fc.property(input, (given) => {
        const parsed = InvocationInput.safeParse(given);
        let seen: ReturnType<typeof currentInvocation>;
        let refused: unknown;
        try {
          seen = runInInvocation(given as InvocationInput, () => currentInvocation());
        } catch (error) {
          refused = error;
        }
        expect(refused === undefined).toBe(parsed.success);
        if (!parsed.success) {
          expect(refused).toBeInstanceOf(DomainError);
          return;
        }
        const { grant: _grant, captureOutbound, ...fields } = parsed.data;
        const expected = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
        if (!parsed.data.grant) expect(seen).toMatchObject(expected);
        expect(seen?.captureOutbound).toBe(captureOutbound ?? true);
      }),
      { numRuns: 2_000 },
    );
  });

  it('is absent outside every invocation and does not leak out of one', async () => {
    expect(currentInvocation()).toBeUndefined();
    await runInInvocation({ door: 'REST', actionId: 'inside' }, async () => {
      await sleep(1);
      expect(currentInvocation()?.actionId).toBe('inside');
    });
    expect(currentInvocation()).toBeUndefined();
    const late = await new Promise((resolve) => setTimeout(() => resolve(currentInvocation()), 5));
    expect(late).toBeUndefined();
  });

  it('follows through awaits, timers, immediates, nextTick and promise chains', async () => {
    const seen = await runInInvocation({ door: 'REST', actionId: 'deep' }, async () => {
      const ids: (string | undefined)[] = [];
      await sleep(2);
      ids.push(currentInvocation()?.actionId);
      await new Promise<void>((resolve) =>
        setTimeout(() => {
          ids.push(currentInvocation()?.actionId);
          resolve();
        }, 3),
      );
      await new Promise<void>((resolve) =>
        setImmediate(() => {
          ids.push(currentInvocation()?.actionId);
          resolve();
        }),
      );
      await new Promise<void>((resolve) =>
        process.nextTick(() => {
          ids.push(currentInvocation()?.actionId);
          resolve();
        }),
      );
      ids.push(await Promise.resolve().then(() => currentInvocation()?.actionId));
      const interval = await new Promise<string | undefined>((resolve) => {
        const handle = setInterval(() => {
          clearInterval(handle);
          resolve(currentInvocation()?.actionId);
        }, 1);
      });
      ids.push(interval);
      return ids;
    });
    expect(seen).toEqual(['deep', 'deep', 'deep', 'deep', 'deep', 'deep']);
  });

  it('follows through stream callbacks and pipelines', async () => {
    const seen = await runInInvocation({ door: 'SSE', actionId: 'streamed' }, async () => {
      const ids: (string | undefined)[] = [];
      const source = Readable.from(
        (async function* () {
          for (const part of ['a', 'b', 'c']) {
            await sleep(1);
            yield part;
          }
        })(),
      );
      const upper = new Transform({
        transform(chunk, _encoding, callback) {
          ids.push(currentInvocation()?.actionId);
          callback(null, String(chunk).toUpperCase());
        },
      });
      let out = '';
      upper.on('data', (chunk) => {
        ids.push(currentInvocation()?.actionId);
        out += chunk;
      });
      await pipeline(source, upper);
      const web = new ReadableStream<string>({
        async pull(controller) {
          await sleep(1);
          controller.enqueue(String(currentInvocation()?.actionId));
          controller.close();
        },
      });
      const reader = web.getReader();
      for (let r = await reader.read(); !r.done; r = await reader.read()) ids.push(r.value);
      expect(out).toBe('ABC');
      return ids;
    });
    expect(seen).toHaveLength(7);
    expect(new Set(seen)).toEqual(new Set(['streamed']));
  });

  it('keeps concurrent interleaved requests apart on a real HTTP server', async () => {
    const server: Server = createServer((request, response) => {
      const id = request.headers['x-action-id'] as string;
      runInInvocation({ door: 'REST', actionId: id }, async () => {
        const observed: (string | undefined)[] = [];
        for (let step = 0; step < 5; step++) {
          // Each request waits a different, shuffled amount so their steps interleave.
          await sleep(((Number(id.slice(4)) * 7 + step * 3) % 5) + 1);
          observed.push(currentInvocation()?.actionId);
        }
        let body = '';
        request.on('data', (chunk) => (body += chunk));
        await once(request, 'end');
        observed.push(currentInvocation()?.actionId);
        response.end(JSON.stringify({ observed, body }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const ids = Array.from({ length: 20 }, (_, i) => `req-${i}`);
      const answers = await Promise.all(
        ids.map(async (id) => {
          const response = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', headers: { 'x-action-id': id }, body: id });
          return { id, ...((await response.json()) as { observed: string[]; body: string }) };
        }),
      );
      for (const answer of answers) {
        expect(answer.body).toBe(answer.id);
        expect(answer.observed).toEqual(Array(6).fill(answer.id));
      }
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  describe('withoutOutboundCapture', () => {
    it('switches capture off for its callback only, keeping the rest of the context', async () => {
      await runInInvocation({ door: 'DISPATCH', actionId: 'runner', task: 'T' }, async () => {
        const inner = await withoutOutboundCapture(async () => {
          await sleep(1);
          return currentInvocation();
        });
        expect(inner).toMatchObject({ actionId: 'runner', task: 'T', captureOutbound: false });
        expect(currentInvocation()?.captureOutbound).toBe(true);
      });
      expect(withoutOutboundCapture(() => currentInvocation())).toBeUndefined();
      expect(runInInvocation({ door: 'REST', captureOutbound: false }, () => currentInvocation()?.captureOutbound)).toBe(false);
    });
  });

  it('binds a callback to the invocation for code that runs it later elsewhere', async () => {
    const emitter = new EventEmitter();
    const bound = runInInvocation({ door: 'REST', actionId: 'bound' }, () => bindToInvocation(() => currentInvocation()?.actionId));
    let seen: string | undefined;
    runInInvocation({ door: 'REST', actionId: 'other' }, () => emitter.on('go', () => (seen = bound())));
    emitter.emit('go');
    expect(seen).toBe('bound');
  });
});

describe('nesting', () => {
  let outer: string | undefined;
  beforeAll(() => (outer = currentInvocation()?.actionId));
  afterAll(() => expect(currentInvocation()).toBeUndefined());

  it('restores the outer invocation after a nested one', async () => {
    expect(outer).toBeUndefined();
    await runInInvocation({ door: 'REST', actionId: 'outer' }, async () => {
      await runInInvocation({ door: 'INTERNAL', actionId: 'inner' }, async () => {
        await sleep(1);
        expect(currentInvocation()?.actionId).toBe('inner');
      });
      expect(currentInvocation()?.actionId).toBe('outer');
    });
  });
});
