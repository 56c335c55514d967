// PostGraphile 5 (Amber preset) serving a dirledger database, the peer `npm run bench -- reads` measures
// against. Plain JavaScript run by node (with bench/lib/with-resolvers.mjs on Node 20):
//   node --import ./bench/lib/with-resolvers.mjs bench/lib/postgraphile-server.mjs
// with DATABASE_URL, PORT and HOST set. The ledger's references are checked by a trigger, not by
// foreign keys, so smart tags declare them (and directory_row.name, unique in the bench's Directory)
// for PostGraphile to offer the same relations.
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

const pgl = postgraphile(preset);
const serv = pgl.createServ(grafserv);
const server = createServer();
serv.addTo(server);
server.listen(port, host, () => process.stdout.write(`postgraphile at http://${host}:${port}/graphql\n`));
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () => {
    server.close();
    void pgl.release().finally(() => process.exit(0));
  });
}
