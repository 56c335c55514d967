// How the embedded database (PGlite, Postgres in WebAssembly) is opened on a data folder.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import v8 from 'node:v8';
import type { PGlite, PGliteOptions } from '@electric-sql/pglite';

const require = createRequire(import.meta.url);

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
  params.push(...sharedBuffersParams(env));
  return params;
}

/** Postgres's shared_buffers for an embedded database, on a folder or in memory: Postgres zeroes all of it at each start. */
export function sharedBuffersParams(env: Record<string, string | undefined> = process.env): string[] {
  return ['-c', `shared_buffers=${env.DIRLEDGER_PGLITE_SHARED_BUFFERS ?? '16MB'}`];
}

/** The exported function of PGlite's WebAssembly that parses SQL (the grammar's parser is inlined into it). */
export const PARSER_EXPORT = 'raw_parser';

/**
 * The index (imports counted, as V8 numbers functions) of the function `name` exports in the WebAssembly
 * module `bytes`, or undefined when it exports no such function. Reads only the import and export sections.
 */
export function exportedFunctionIndex(bytes: Uint8Array, name: string): number | undefined {
  let p = 8;
  const leb = () => {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      if (p >= bytes.length) throw new RangeError('WebAssembly module ends inside a number');
      const byte = bytes[p++]!;
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
    }
  };
  const skipName = () => {
    const length = leb();
    p += length;
    return length;
  };
  const wanted = new TextEncoder().encode(name);
  const isWanted = (start: number, length: number) => length === wanted.length && wanted.every((b, i) => bytes[start + i] === b);
  if (bytes.length < 8 || bytes[0] !== 0 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d) return undefined;
  let importedFunctions = 0;
  try {
    while (p < bytes.length) {
      const id = bytes[p++];
      const size = leb();
      const end = p + size;
      if (id === 2) {
        for (let n = leb(); n > 0; n--) {
          skipName();
          skipName();
          const kind = bytes[p++];
          if (kind === 0) {
            leb();
            importedFunctions++;
          } else if (kind === 1) {
            p++;
            if (leb() & 1) leb();
            leb();
          } else if (kind === 2) {
            if (leb() & 1) leb();
            leb();
          } else if (kind === 3) p += 2;
          else if (kind === 4) {
            p++;
            leb();
          } else return undefined;
        }
      } else if (id === 7) {
        for (let n = leb(); n > 0; n--) {
          const length = leb();
          const start = p;
          p += length;
          const kind = bytes[p++];
          const index = leb();
          if (kind === 0 && isWanted(start, length)) return index >= importedFunctions ? index : undefined;
        }
        return undefined;
      }
      p = end;
    }
  } catch (error) {
    if (error instanceof RangeError) return undefined;
    throw error;
  }
  return undefined;
}

let compiled: Promise<WebAssembly.Module> | undefined;

/**
 * PGlite's WebAssembly, compiled once per process with its SQL parser on V8's optimizing compiler from
 * the start. V8 compiles a function with its baseline compiler first and, once it is hot, again with
 * TurboFan on a worker thread; for `raw_parser` (105 KB of code) that second compile needs ~600 MB for
 * 3–10 s, and it became hot while the server built its Directory, so on a busy machine the spike ran into
 * the first traffic. Compiled eagerly here (a compilation hint V8 takes from
 * --wasm-eager-tier-up-function, set only while this module compiles), it is over before PGlite opens,
 * and the memory goes back to the system (the malloc trim threshold) before the server listens.
 */
export function compiledPglite(): Promise<WebAssembly.Module> {
  compiled ??= compile().catch((error: unknown) => {
    compiled = undefined;
    throw error;
  });
  return compiled;
}

async function compile(): Promise<WebAssembly.Module> {
  const file = path.join(path.dirname(require.resolve('@electric-sql/pglite')), 'pglite.wasm');
  const bytes = await fs.promises.readFile(file);
  // Started with --liftoff-only (a short-lived process, e.g. the suite's servers), V8 would still compile the hinted parser with TurboFan.
  const parser = process.execArgv.includes('--liftoff-only') ? undefined : exportedFunctionIndex(bytes, PARSER_EXPORT);
  // A pending compile keeps no handle open: without this, a process with nothing else to do would exit meanwhile.
  const alive = setInterval(() => {}, 60_000);
  if (parser !== undefined) v8.setFlagsFromString(`--wasm-eager-tier-up-function=${parser}`);
  try {
    return await WebAssembly.compile(bytes);
  } finally {
    if (parser !== undefined) v8.setFlagsFromString('--wasm-eager-tier-up-function=-1');
    clearInterval(alive);
  }
}

/**
 * Opens PGlite on `dataDir` with durable commits (see embeddedStartParams); with `wasmModule`, on that
 * compiled module (compiledPglite) instead of compiling its own.
 */
export async function createEmbedded(dataDir: string, wasmModule?: WebAssembly.Module): Promise<PGlite> {
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
  const options: PGliteOptions = {
    fs: new DurableNodeFS(dataDir),
    startParams: embeddedStartParams(PGlite.defaultStartParams),
    ...(wasmModule && { pgliteWasmModule: wasmModule }),
  };
  return PGlite.create(options);
}

/** Whether Postgres has created its cluster in `pgDataDir` (initdb has run). */
export function isInitialised(pgDataDir: string): boolean {
  return fs.existsSync(`${pgDataDir}/PG_VERSION`);
}
