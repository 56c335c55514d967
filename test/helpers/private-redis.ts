// A private redis-server child (never the machine's own), killable and restartable on one port.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

/** Why a private Redis cannot run here, or null. */
export const privateRedisMissing: string | null = spawnSync('redis-server', ['--version']).error ? 'redis-server is not installed' : null;

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

export function privateRedis(port: number) {
  let child: ChildProcess | undefined;
  return {
    url: `redis://127.0.0.1:${port}`,
    async start() {
      child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
      const { Redis } = await import('ioredis');
      const probe = new Redis(port, '127.0.0.1', { lazyConnect: true, retryStrategy: () => 50, maxRetriesPerRequest: null });
      probe.on('error', () => {});
      await probe.connect().catch(() => {});
      await probe.ping();
      probe.disconnect();
    },
    async kill() {
      const c = child!;
      if (c.exitCode !== null || c.signalCode !== null) return;
      const exited = new Promise((r) => c.once('exit', r));
      c.kill('SIGKILL');
      await exited;
    },
  };
}
