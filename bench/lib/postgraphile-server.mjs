// PostGraphile 5 (Amber preset) serving a dirledger database, the peer `npm run bench -- reads` measures
// against. Plain JavaScript run by node (with bench/lib/with-resolvers.mjs on Node 20):
//   node --import ./bench/lib/with-resolvers.mjs bench/lib/postgraphile-server.mjs
// with DATABASE_URL, PORT and HOST set. The ledger's references are checked by a trigger, not by
// foreign keys, so smart tags declare them (and directory_row.name, unique in the bench's Directory)
// for PostGraphile to offer the same relations.
//
// With RECORD_FOLDER set it keeps the record dirledger keeps of a recorded read (REQUEST/IN staged,
// RESPONSE/OUT durable before the answer, exact bytes) through the product's own pipeline
// (bench/lib/recorder.ts) on the same database: what PostGraphile would pay for the record, so that
// the bench can tell the record's cost from the server's own.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { postgraphile } from 'postgraphile';
import { makePgService } from 'postgraphile/adaptors/pg';
import { grafserv } from 'postgraphile/grafserv/node';
import { PostGraphileAmberPreset } from 'postgraphile/presets/amber';
import { jsonPgSmartTags } from 'postgraphile/utils';

const tags = jsonPgSmartTags({
  version: 1,
  config: {
    class: {
      ledger_event: {
        tags: {
          foreignKey: [
            '(payload_sha256) references blob (sha256)|@fieldName payload',
            '(contract_sha256) references contract_version (sha256)|@fieldName contractVersion',
            '(tool) references directory_row (name)|@fieldName toolRow|@foreignFieldName events',
          ],
        },
      },
      directory_row: { tags: { unique: 'name' } },
    },
    // tool's index is partial (WHERE tool IS NOT NULL), which PostGraphile does not offer as a condition by default.
    attribute: { 'ledger_event.tool': { tags: { behavior: ['+filterBy'] } } },
  },
});

const port = Number(process.env.PORT);
const host = process.env.HOST ?? '127.0.0.1';
const preset = {
  extends: [PostGraphileAmberPreset],
  plugins: [tags],
  pgServices: [makePgService({ connectionString: process.env.DATABASE_URL, schemas: ['public'], poolConfig: { max: Number(process.env.POOL_MAX ?? 10) } })],
  grafserv: { port, host, graphqlPath: '/graphql', graphiql: false },
  grafast: { explain: false },
};

// The product's recording pipeline and payload helpers (TypeScript, which the bench's Node runs).
const recording = process.env.RECORD_FOLDER && { ...(await import('./recorder.ts')), ...(await import('../../src/capture/payload.ts')) };
const pgl = postgraphile(preset);
const serv = pgl.createServ(grafserv);
const recorder = recording ? await recording.openRecorder(process.env.DATABASE_URL, process.env.RECORD_FOLDER) : undefined;
const server = createServer();
if (recorder) server.on('request', recordedHandler(serv, recorder, recording));
else serv.addTo(server);
server.listen(port, host, () => process.stdout.write(`postgraphile at http://${host}:${port}/graphql\n`));
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () => {
    server.close();
    void Promise.resolve(recorder?.close())
      .then(() => pgl.release())
      .finally(() => process.exit(0));
  });
}

/** Grafserv's node handler for a JSON answer, with dirledger's record of the exchange around it. */
function recordedHandler(serv, { writer, serving }, { eventOf, bytesPayload }) {
  const flat = (headers) => Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)]));
  return async (req, res) => {
    serving(res);
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = Buffer.concat(chunks);
    const actionId = randomUUID();
    const metadata = { capture: 'boundary', door: 'GRAPHQL' };
    void writer
      .stage(
        eventOf(actionId, 'door:request', {
          kind: 'REQUEST',
          direction: 'IN',
          method: req.method,
          url: req.url,
          headers: flat(req.headers),
          payload: bytesPayload(body),
          metadata,
        }),
      )
      .catch(() => {}); // it is written with the answer below, whose failure answers 503
    const digest = serv.getDigest(serv.dynamicOptions, req, res, false);
    digest.getBody = async () => ({ type: 'buffer', buffer: body });
    const result = await serv.processRequest(digest);
    const answer =
      result?.type === 'buffer'
        ? result.buffer
        : result?.type === 'json'
          ? Buffer.from(JSON.stringify(result.json), 'utf8')
          : Buffer.from(`unexpected ${result?.type}`);
    const status = result?.type === 'buffer' || result?.type === 'json' ? result.statusCode : 500;
    const headers = {
      ...Object.fromEntries(Object.entries(result?.headers ?? {}).filter(([k]) => k.toLowerCase() !== 'content-length')),
      'content-length': String(answer.length),
    };
    try {
      await writer.enqueue(
        eventOf(actionId, 'door:answer', {
          kind: 'RESPONSE',
          direction: 'OUT',
          status: String(status),
          headers: flat(headers),
          payload: bytesPayload(answer),
          metadata,
        }),
      );
    } catch (error) {
      res.writeHead(503);
      res.end(String(error));
      return;
    }
    res.writeHead(status, headers);
    res.end(answer);
  };
}
