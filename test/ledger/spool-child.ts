// A process that appends to a spool until it is killed (test/ledger/spool-prealloc.test.ts): several
// appends in flight at once, payloads from a few bytes to more than a segment, and one stdout line per
// append once it resolved (durable). stdout is a pipe, written synchronously: a printed id was acknowledged.
//
// With `release`, it lets go of what it recovered at once and of all but its newest 40 appends as it
// goes (as the Ledger committing them would), so committed segments are recycled under it; it prints
// `released N` (its own appends) after each release.
//
//   node test/ledger/spool-child.ts DIR PREFIX SEGMENT_BYTES [release]
import { EventInput } from '../../src/ledger/input.ts';
import { Spool } from '../../src/ledger/spool.ts';

const [dir, prefix, segmentBytes, mode] = process.argv.slice(2);
const { spool, recovered } = await Spool.open({ dir: dir!, maxBytes: 1 << 30, maxEvents: 1_000_000, segmentBytes: Number(segmentBytes) });
if (mode === 'release') spool.release(recovered.length);
process.stdout.write(`ready ${recovered.length}\n`);
let acknowledged = 0;
let released = 0;

let n = 0;
async function worker(): Promise<never> {
  for (;;) {
    const id = `${prefix}-${n++}`;
    // Mostly small, some spanning many pages, now and then larger than a whole segment.
    const size = n % 17 === 0 ? Number(segmentBytes) + 1000 : n % 5 === 0 ? 20_000 + (n % 7) * 3_000 : 100 + (n % 13) * 37;
    const event = EventInput.parse({
      id,
      kind: 'TOOL_CALL',
      direction: 'OUT',
      actionId: `act-${id}`,
      occurredAt: new Date().toISOString(),
      payload: { state: 'COMPLETE', text: `${id}:`.padEnd(size, 'x') },
    });
    await spool.append([event], () => {});
    process.stdout.write(`${id}\n`);
    if (mode === 'release' && ++acknowledged - released > 40) {
      spool.release(acknowledged - 40 - released);
      released = acknowledged - 40;
      process.stdout.write(`released ${released}\n`);
    }
  }
}
await Promise.all(Array.from({ length: 4 }, worker));
