// The wake-up signal of the live tail: "the ledger has new commits". It only wakes readers; the
// cursor read decides what is delivered, so a lost signal delays delivery and never drops it.
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Redis, RedisOptions } from 'ioredis';
import type { createRedisEventTarget } from '@graphql-yoga/redis-event-target';
import type { Logger } from '../logger.ts';

// Loaded by the first RedisSignal only: without REDIS_URL their ~14 MB of modules never load.
const require = createRequire(import.meta.url);

export interface LiveSignal {
  readonly kind: 'memory' | 'redis';
  /** Tells every reader (in this process, and in others through Redis) that `position` committed. */
  notify(position: bigint): void;
  /**
   * Calls `wake` for every notification, with the committed position when known (a reader that has
   * read past it can skip the read); returns the unsubscribe function.
   */
  onWake(wake: (position?: bigint) => void): () => void;
  close(): Promise<void>;
}

/** One process: the tail is woken directly by `Ledger.onAppended`. */
export class MemorySignal implements LiveSignal {
  readonly kind = 'memory' as const;
  private readonly wakes = new Set<(position?: bigint) => void>();

  notify(position?: bigint): void {
    for (const wake of this.wakes) wake(position);
  }

  onWake(wake: (position?: bigint) => void): () => void {
    this.wakes.add(wake);
    return () => this.wakes.delete(wake);
  }

  async close(): Promise<void> {
    this.wakes.clear();
  }
}

type AppendedEvent = CustomEvent<{ position: string; from: string }>;

/**
 * Several processes: Redis pub/sub through `@graphql-yoga/redis-event-target`. The local tail is
 * woken directly, so this process never waits on Redis, and its own messages coming back are
 * ignored. Commits notified in the same turn of the event loop go out as one message (the highest
 * position). Publishes while Redis is away fail fast and are dropped (the safety poll covers
 * them); the subscriber reconnects and resubscribes.
 */
export class RedisSignal implements LiveSignal {
  readonly kind = 'redis' as const;
  private readonly local = new MemorySignal();
  private readonly publisher: Redis;
  private readonly subscriber: Redis;
  private readonly target: ReturnType<typeof createRedisEventTarget<AppendedEvent>>;
  /** Tells this instance's own messages from the others'. */
  private readonly instance = randomUUID();
  private pending: bigint | undefined;
  private readonly listener = (event: AppendedEvent) => {
    const detail = event.detail;
    if (detail?.from === this.instance) return;
    this.local.notify(detail?.position ? BigInt(detail.position) : undefined);
  };

  private readonly channel: string;
  constructor(url: string, channel: string, logger: Logger) {
    this.channel = channel;
    const { Redis } = require('ioredis') as typeof import('ioredis');
    const redisEventTarget = require('@graphql-yoga/redis-event-target') as typeof import('@graphql-yoga/redis-event-target');
    const options: RedisOptions = { lazyConnect: false, retryStrategy: (times) => Math.min(times * 100, 1000) };
    this.publisher = new Redis(url, { ...options, enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    this.subscriber = new Redis(url, { ...options, maxRetriesPerRequest: null });
    let warned = false;
    const onError = (error: Error) => {
      if (!warned) logger.warn({ err: error }, 'redis signal unavailable; the safety poll keeps delivery going');
      warned = true;
    };
    this.publisher.on('error', onError);
    this.subscriber.on('error', onError);
    this.subscriber.on('ready', () => {
      warned = false;
      // Commits made while we were disconnected were announced to nobody: read now.
      this.local.notify();
    });
    // The event target calls publish/subscribe without handling their promises; these adapters do.
    const publishClient = {
      publish: (topic: string, message: string) => this.publisher.publish(topic, message).catch(() => 0),
    } as unknown as Redis;
    const subscribeClient = {
      on: (name: string, fn: (...args: unknown[]) => void) => this.subscriber.on(name, fn),
      subscribe: (topic: string) => this.subscriber.subscribe(topic).catch(() => 0),
      unsubscribe: (topic: string) => this.subscriber.unsubscribe(topic).catch(() => 0),
    } as unknown as Redis;
    this.target = redisEventTarget.createRedisEventTarget<AppendedEvent>({ publishClient, subscribeClient });
    this.target.addEventListener(this.channel, this.listener);
  }

  notify(position: bigint): void {
    this.local.notify(position);
    if (this.pending !== undefined) {
      if (position > this.pending) this.pending = position;
      return;
    }
    this.pending = position;
    setImmediate(() => {
      const detail = { position: this.pending!.toString(), from: this.instance };
      this.pending = undefined;
      this.target.dispatchEvent(new CustomEvent(this.channel, { detail }) as AppendedEvent);
    });
  }

  onWake(wake: (position?: bigint) => void): () => void {
    return this.local.onWake(wake);
  }

  async close(): Promise<void> {
    this.target.removeEventListener(this.channel, this.listener);
    await this.local.close();
    this.publisher.disconnect();
    this.subscriber.disconnect();
  }
}
