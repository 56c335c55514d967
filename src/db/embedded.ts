// How the embedded database (PGlite, Postgres in WebAssembly) is opened on a data folder.
import fs from 'node:fs';
import type { PGlite, PGliteOptions } from '@electric-sql/pglite';

/**
 * Postgres settings for the embedded database. PGlite starts with fsync off (`-F`) and its Node file
 * system ignores fsync, so a committed transaction is only in the page cache: an answered call could be
 * lost to a power cut. Here fsync is on (the WAL flushed with fsync at each commit: the WebAssembly build
 * has no fdatasync) and shared buffers are 16 MB instead of 128 MB, a third of the idle resident memory
 * for the page cache a single process of this size needs (DIRLEDGER_PGLITE_SHARED_BUFFERS overrides).
 */
export function embeddedStartParams(defaults: readonly string[], env: Record<string, string | undefined> = process.env): string[] {
  const params = defaults.filter((param) => param !== '-F');
  params.push('-c', 'fsync=on', '-c', 'wal_sync_method=fsync');
  params.push('-c', `shared_buffers=${env.DIRLEDGER_PGLITE_SHARED_BUFFERS ?? '16MB'}`);
  return params;
}

/** Opens PGlite on `dataDir` with durable commits (see embeddedStartParams). */
export async function createEmbedded(dataDir: string): Promise<PGlite> {
  const [{ PGlite }, { NodeFS }] = await Promise.all([import('@electric-sql/pglite'), import('@electric-sql/pglite/nodefs')]);
  class DurableNodeFS extends NodeFS {
    // Emscripten's Node file system has no fsync operation, so Postgres's fsync calls succeed doing nothing.
    override async init(pg: PGlite, options: Parameters<InstanceType<typeof NodeFS>['init']>[1]) {
      const result = await super.init(pg, options);
      const preRun = result.emscriptenOpts.preRun ?? [];
      result.emscriptenOpts.preRun = [
        ...preRun,
        (module: { NODEFS: { stream_ops: Record<string, unknown> } }) => {
          module.NODEFS.stream_ops.fsync = (stream: { nfd: number }) => {
            fs.fdatasyncSync(stream.nfd);
            return 0;
          };
        },
      ];
      return result;
    }
  }
  const options: PGliteOptions = { fs: new DurableNodeFS(dataDir), startParams: embeddedStartParams(PGlite.defaultStartParams) };
  return PGlite.create(options);
}

/** Whether Postgres has created its cluster in `pgDataDir` (initdb has run). */
export function isInitialised(pgDataDir: string): boolean {
  return fs.existsSync(`${pgDataDir}/PG_VERSION`);
}
