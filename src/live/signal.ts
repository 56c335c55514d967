// The wake-up signal of the live tail: "the ledger has new commits". It only wakes readers; the
// cursor read decides what is delivered, so a lost signal delays delivery and never drops it.
import { Redis, type RedisOptions } from 'ioredis';
import { createRedisEventTarget } from '@graphql-yoga/redis-event-target';
import type { Logger } from '../logger.ts';

export interface LiveSignal {
  readonly kind: 'memory' | 'redis';
  /** Tells every reader (in this process, and in others through Redis) that `position` committed. */
  notify(position: bigint): void;
  /** Calls `wake` for every notification; returns the unsubscribe function. */
  onWake(wake: () => void): () => void;
  close(): Promise<void>;
}

/** One process: the tail is woken directly by `Ledger.onAppended`. */
export class MemorySignal implements LiveSignal {
  readonly kind = 'memory' as const;
  private readonly wakes = new Set<() => void>();

  notify(): void {
    for (const wake of this.wakes) wake();
  }

  onWake(wake: () => void): () => void {
    this.wakes.add(wake);
    return () => this.wakes.delete(wake);
  }

  async close(): Promise<void> {
    this.wakes.clear();
  }
}

type AppendedEvent = CustomEvent<{ position: string }>;

/**
 * Several processes: Redis pub/sub through `@graphql-yoga/redis-event-target`. The local tail is
 * also woken directly, so this process never waits on Redis. Publishes while Redis is away fail
 * fast and are dropped (the safety poll covers them); the subscriber reconnects and resubscribes.
 */
export class RedisSignal implements LiveSignal {
  readonly kind = 'redis' as const;
  private readonly local = new MemorySignal();
  private readonly publisher: Redis;
  private readonly subscriber: Redis;
  private readonly target: ReturnType<typeof createRedisEventTarget<AppendedEvent>>;
  private readonly listener = () => this.local.notify();

  constructor(
    url: string,
    private readonly channel: string,
    logger: Logger,
  ) {
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
    this.target = createRedisEventTarget<AppendedEvent>({ publishClient, subscribeClient });
    this.target.addEventListener(this.channel, this.listener);
  }

  notify(position: bigint): void {
    this.local.notify();
    this.target.dispatchEvent(new CustomEvent(this.channel, { detail: { position: position.toString() } }) as AppendedEvent);
  }

  onWake(wake: () => void): () => void {
    return this.local.onWake(wake);
  }

  async close(): Promise<void> {
    this.target.removeEventListener(this.channel, this.listener);
    await this.local.close();
    this.publisher.disconnect();
    this.subscriber.disconnect();
  }
}
