// Shared by the door tests: the ledger events of one action, read after the writer has flushed.
import type { TestApp } from '../helpers/app.ts';

export type RecordedEvent = { kind: string; direction: string; tool: string | null; status: string | null; metadata: any; payloadState: string };

/** Every event of one action, in position order, once everything queued has been written. */
export async function eventsOf(t: TestApp, actionId: string): Promise<RecordedEvent[]> {
  // A streamed answer is recorded when its stream ends, a moment after the client has read it.
  for (let attempt = 0; attempt < 50; attempt++) {
    await t.app.services.writer.flush();
    const events = await t.app.services.db.prisma.ledgerEvent.findMany({
      where: { actionId },
      orderBy: { position: 'asc' },
      select: { kind: true, direction: true, tool: true, status: true, metadata: true, payloadState: true },
    });
    if (events.some((e) => e.kind === 'RESPONSE' && e.direction === 'OUT' && (e.metadata as any)?.capture === 'boundary')) return events;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no answer OUT was recorded for action ${actionId}`);
}

/** The request IN and answer OUT the boundary recorded for one door exchange. */
export function boundaryPair(events: RecordedEvent[]) {
  const request = events.find((e) => e.kind === 'REQUEST' && e.direction === 'IN' && e.metadata?.capture === 'boundary');
  const answer = events.find((e) => e.kind === 'RESPONSE' && e.direction === 'OUT' && e.metadata?.capture === 'boundary');
  return { request, answer };
}

export const actionIdIn = (text: string): string | undefined => /"actionId"\s*:\s*"([^"]+)"/.exec(text)?.[1];
