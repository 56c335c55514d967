// Test databases reused within a test process, instead of one made and dropped per test file.
//
// Embedded: one in-memory PGlite per process (two at most, for files that hold two at once). Opening one from the
// template dump costs ~0.65 s of CPU, and a run opens ~116; putting one back as the template left it costs ~0.09 s
// (median of 30, most of it the fingerprint below). A test database is handed back when it is closed, and reset: its session discarded, every table
// emptied and the template's rows and sequence values put back. It is kept only when its catalog, settings and
// statistics still are the template's (a test that changed the schema, a role, a setting, or ran ANALYZE leaves
// an instance that is closed instead), and only while no one else holds it: a handle kept after close() answers
// as a closed PGlite does.
//
// PostgreSQL: the same for a process's test databases on the suite's cluster (below, pooledPostgres).
import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';

/** The fingerprint a reused database must still have, and the tables and sequence values a reset puts back. */
type Shape = { fingerprint: string; tables: string[]; sequences: { name: string; value: string; called: boolean }[] };

/** The template as a PGlite reset puts it back: its shape and its rows. */
type TemplateState = Shape & { rows: { table: string; copy: Blob }[] };

const userSchemas = `n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp%'`;

/**
 * One row: everything a reset does not put back, each part a sorted list. A test that changes any of it (DDL, a
 * role or a membership, a grant, a persistent setting, planner statistics, a large object, a prepared transaction)
 * makes the instance differ from the template, and it is closed.
 */
function fingerprintQuery(scope: 'instance' | 'database'): string {
  // A PostgreSQL test database shares its cluster with the other workers': only what is its own counts there.
  const own = scope === 'database';
  return `SELECT md5(concat_ws(E'\\n',
  (SELECT string_agg(format('%s.%s %s %s %s %s %s %s', n.nspname, c.relname, c.relkind, c.relpersistence, c.relacl, c.reloptions, c.relrowsecurity, c.relforcerowsecurity), ',' ORDER BY n.nspname, c.relname)
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE ${userSchemas}),
  (SELECT string_agg(format('%s.%s %s %s %s %s %s %s', n.nspname, c.relname, a.attnum, a.attname, a.atttypid, a.attnotnull, a.attisdropped, pg_get_expr(d.adbin, d.adrelid)), ',' ORDER BY n.nspname, c.relname, a.attnum)
     FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
     LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum WHERE ${userSchemas} AND a.attnum > 0),
  (SELECT string_agg(format('%s %s %s', co.conrelid::regclass, co.conname, pg_get_constraintdef(co.oid)), ',' ORDER BY co.conrelid::regclass::text, co.conname)
     FROM pg_constraint co JOIN pg_namespace n ON n.oid = co.connamespace WHERE ${userSchemas}),
  (SELECT string_agg(pg_get_indexdef(i.indexrelid), ',' ORDER BY pg_get_indexdef(i.indexrelid)) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE ${userSchemas}),
  (SELECT string_agg(format('%s %s %s %s', t.tgrelid::regclass, t.tgname, t.tgenabled, t.tgfoid::regproc), ',' ORDER BY t.tgrelid::regclass::text, t.tgname) FROM pg_trigger t WHERE NOT t.tgisinternal),
  (SELECT string_agg(format('%s %s %s %s %s', p.oid::regprocedure, md5(p.prosrc), p.proacl, p.prosecdef, p.proconfig), ',' ORDER BY p.oid::regprocedure::text)
     FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE ${userSchemas}),
  (SELECT string_agg(format('%s %s %s', r.ev_class::regclass, r.rulename, md5(pg_get_ruledef(r.oid))), ',' ORDER BY r.ev_class::regclass::text, r.rulename) FROM pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class JOIN pg_namespace n ON n.oid = c.relnamespace WHERE ${userSchemas}),
  (SELECT string_agg(format('%s %s', t.typname, n.nspname), ',' ORDER BY n.nspname, t.typname) FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace WHERE ${userSchemas}),
  (SELECT string_agg(format('%s %s', e.enumtypid, e.enumlabel), ',' ORDER BY e.enumtypid, e.enumsortorder) FROM pg_enum e),
  (SELECT string_agg(format('%s %s', nspname, nspacl), ',' ORDER BY nspname) FROM pg_namespace),
  ${own ? "''" : `(SELECT string_agg(format('%s %s %s %s %s %s %s', rolname, rolsuper, rolinherit, rolcreaterole, rolcanlogin, rolbypassrls, rolconfig), ',' ORDER BY rolname) FROM pg_roles)`},
  ${own ? "''" : `(SELECT string_agg(format('%s %s %s', roleid, member, admin_option), ',' ORDER BY roleid, member) FROM pg_auth_members)`},
  (SELECT string_agg(format('%s %s %s', setdatabase, setrole, setconfig), ',' ORDER BY setdatabase, setrole) FROM pg_db_role_setting
     ${own ? 'WHERE setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())' : ''}),
  (SELECT string_agg(format('%s %s %s %s', ${own ? "''" : 'datname'}, datacl, datallowconn, datconnlimit), ',' ORDER BY datname) FROM pg_database
     ${own ? 'WHERE datname = current_database()' : ''}),
  (SELECT string_agg(format('%s %s %s', defaclrole, defaclnamespace, defaclacl), ',' ORDER BY defaclrole, defaclnamespace, defaclobjtype) FROM pg_default_acl),
  (SELECT string_agg(format('%s %s %s', polrelid::regclass, polname, pg_get_expr(polqual, polrelid)), ',' ORDER BY polrelid::regclass::text, polname) FROM pg_policy),
  (SELECT string_agg(format('%s=%s', name, setting), ',' ORDER BY name) FROM pg_settings WHERE source <> 'default'),
  (SELECT string_agg(extname || ' ' || extversion, ',' ORDER BY extname) FROM pg_extension),
  ${own ? "''" : '(SELECT count(*) FROM pg_statistic)::text'},
  (SELECT count(*) FROM pg_largeobject_metadata)::text,
  (SELECT count(*) FROM pg_prepared_xacts WHERE database = current_database())::text,
  (SELECT count(*) FROM pg_publication)::text,
  (SELECT count(*) FROM pg_event_trigger)::text
)) AS fingerprint`;
}
const instanceFingerprint = fingerprintQuery('instance');

async function fingerprintOf(pglite: PGlite): Promise<string> {
  return (await pglite.query<{ fingerprint: string }>(instanceFingerprint)).rows[0]!.fingerprint;
}

/** Ends whatever the last holder left open in the session: a transaction, settings, prepared statements, temporary tables, locks. */
async function discardSession(pglite: PGlite): Promise<void> {
  await pglite.exec('ROLLBACK').catch(() => {});
  await pglite.exec('DISCARD ALL');
}

/** A query on either kind of database, answering its rows. */
type Rows = <R>(text: string, params?: unknown[]) => Promise<R[]>;

/** The template's tables and sequences (with their values), which a reset empties and sets back, and its fingerprint. */
async function readShape(query: Rows, fingerprintSql: string): Promise<Shape & { nonEmpty: string[] }> {
  const names = async (relkinds: string[]) =>
    (
      await query<{ name: string }>(
        `SELECT format('%I.%I', n.nspname, c.relname) AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = ANY($1) AND ${userSchemas} ORDER BY 1`,
        [relkinds],
      )
    ).map((r) => r.name);
  const tables = await names(['r', 'p']);
  const sequences = [];
  for (const name of await names(['S'])) {
    const { last_value, is_called } = (await query<{ last_value: string; is_called: boolean }>(`SELECT last_value::text, is_called FROM ${name}`))[0]!;
    sequences.push({ name, value: last_value, called: is_called });
  }
  const nonEmpty = [];
  for (const table of tables) if ((await query(`SELECT 1 FROM ${table} LIMIT 1`)).length > 0) nonEmpty.push(table);
  const fingerprint = (await query<{ fingerprint: string }>(fingerprintSql))[0]!.fingerprint;
  return { fingerprint, tables, sequences, nonEmpty };
}

const pgliteRows =
  (pglite: PGlite): Rows =>
  async <R>(text: string, params: unknown[] = []) =>
    (await pglite.query<R>(text, params)).rows;

async function readTemplate(pglite: PGlite): Promise<TemplateState> {
  await discardSession(pglite);
  const { fingerprint, tables, sequences, nonEmpty } = await readShape(pgliteRows(pglite), instanceFingerprint);
  const rows: TemplateState['rows'] = [];
  for (const table of nonEmpty) rows.push({ table, copy: (await pglite.query(`COPY ${table} TO '/dev/blob' WITH (FORMAT binary)`)).blob! });
  return { fingerprint, tables, rows, sequences };
}

/** Puts the template's data back; false when the instance cannot be reused (closed, or no longer the template's shape). */
async function reset(pglite: PGlite, template: TemplateState): Promise<boolean> {
  if (pglite.closed) return false;
  try {
    await discardSession(pglite);
    if ((await fingerprintOf(pglite)) !== template.fingerprint) return false;
    // The ledger's append-only triggers refuse TRUNCATE; as replication does, this session skips them.
    await pglite.exec('SET session_replication_role = replica');
    await pglite.exec(`TRUNCATE ${template.tables.join(', ')}`);
    for (const { table, copy } of template.rows) await pglite.query(`COPY ${table} FROM '/dev/blob' WITH (FORMAT binary)`, [], { blob: copy });
    for (const { name, value, called } of template.sequences) await pglite.query(`SELECT setval($1::regclass, $2::bigint, $3)`, [name, value, called]);
    await pglite.exec('DISCARD ALL');
    await pglite.exec('CHECKPOINT');
    return true;
  } catch {
    return false;
  }
}

let template: Promise<TemplateState> | undefined;
const counts = { opened: 0, reused: 0, discarded: 0 };
/** How many instances this process opened, reused and closed instead of reusing (for the pool's own test). */
export const poolCounts = (): Readonly<typeof counts> => ({ ...counts });
const idle: PGlite[] = [];
/** Instances kept idle at most: files that hold two databases at once (two instances, a database per kind) reuse both. */
const keepIdle = 2;

/**
 * A handle on `pglite` that acts as it does until `release` runs (the database's close()), then as a closed PGlite:
 * the instance goes back to the pool, and whoever still holds the handle (a writer, an app not stopped) reaches it no more.
 */
function lend(pglite: PGlite, release: () => Promise<void>): PGlite {
  let lent = true;
  let closing: Promise<void> | undefined;
  // What a holder sets on the handle (a test wrapping `query` to count statements) stays on the handle.
  const own = new Map<PropertyKey, unknown>();
  return new Proxy(pglite, {
    set(_target, key, value) {
      own.set(key, value);
      return true;
    },
    defineProperty() {
      return false;
    },
    deleteProperty(_target, key) {
      return own.delete(key);
    },
    get(target, key) {
      if (own.has(key)) return own.get(key);
      if (key === 'close') {
        return () => {
          closing ??= (async () => {
            lent = false;
            await release();
          })();
          return closing;
        };
      }
      if (key === 'closed') return !lent || target.closed;
      const value = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        // As PGlite's own (async) methods answer once it is closed.
        if (!lent) return Promise.reject(new Error('PGlite is closed'));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

/** An in-memory PGlite in the template's state, from the pool or opened from `dump`; its close() gives it back. */
export async function pooledPglite(open: () => Promise<PGlite>): Promise<PGlite> {
  let pglite = idle.pop();
  if (pglite) counts.reused++;
  else {
    counts.opened++;
    pglite = await open();
    template ??= readTemplate(pglite);
    const state = await template;
    // The instance the template was read from is as fresh as any other; a later one is checked as every reuse is.
    if ((await fingerprintOf(pglite)) !== state.fingerprint) throw new Error('A fresh PGlite from the template differs from the template');
  }
  const instance = pglite;
  return lend(instance, async () => {
    const state = await template!;
    if (idle.length < keepIdle && (await reset(instance, state))) idle.push(instance);
    else {
      counts.discarded++;
      if (!instance.closed) await instance.close();
    }
  });
}

/**
 * PostgreSQL test databases, likewise: a database made from the template costs a copy of it written to the WAL
 * (~0.3 s) and dropping it an immediate checkpoint of the whole cluster (~0.14 s on the quiet machine, more while
 * the other workers write). One given back is reset over a connection of its own, after every other connection to
 * it (a child server, a listener) is ended; planner statistics are removed, since autovacuum may have gathered some.
 */
type PostgresTemplate = Shape & { rows: { table: string; columns: string; json: string }[] };

const databaseFingerprint = fingerprintQuery('database');
let postgresTemplate: Promise<PostgresTemplate> | undefined;
const idlePostgres: string[] = [];

async function onDatabase<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => {});
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => {});
  }
}

async function readPostgresTemplate(client: pg.Client): Promise<PostgresTemplate> {
  const { fingerprint, tables, sequences, nonEmpty } = await readShape(async (text, params) => (await client.query(text, params)).rows, databaseFingerprint);
  const rows: PostgresTemplate['rows'] = [];
  for (const table of nonEmpty) {
    const { rows: found } = await client.query<{ json: string; columns: string }>(
      `SELECT (SELECT json_agg(t)::text FROM ${table} t) AS json,
              (SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped AND attgenerated = '') AS columns`,
      [table],
    );
    rows.push({ table, columns: found[0]!.columns, json: found[0]!.json });
  }
  return { fingerprint, tables, rows, sequences };
}

/** A PostgreSQL test database in the template's state, from this process's idle ones or made by `create`. */
export async function pooledPostgres(create: () => Promise<string>, urlOf: (name: string) => string): Promise<string> {
  const name = idlePostgres.pop();
  if (name) {
    counts.reused++;
    return name;
  }
  counts.opened++;
  const made = await create();
  postgresTemplate ??= onDatabase(urlOf(made), readPostgresTemplate);
  await postgresTemplate;
  return made;
}

/** Gives a database back, closed by its holder: reset and kept, or dropped by `drop` when it cannot be reused. */
export async function releasePostgres(name: string, url: string, drop: () => Promise<void>): Promise<void> {
  const template = await postgresTemplate;
  const kept = template && idlePostgres.length < keepIdle && (await resetPostgres(url, template).catch(() => false));
  if (kept) idlePostgres.push(name);
  else {
    counts.discarded++;
    await drop();
  }
}

async function resetPostgres(url: string, template: PostgresTemplate): Promise<boolean> {
  return onDatabase(url, async (client) => {
    for (let tries = 0; ; tries++) {
      const { rows } = await client.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
      );
      if (rows.length === 0) break;
      if (tries === 50) return false;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    if ((await client.query<{ fingerprint: string }>(databaseFingerprint)).rows[0]!.fingerprint !== template.fingerprint) return false;
    await client.query('BEGIN');
    await client.query('SET LOCAL session_replication_role = replica');
    await client.query(`TRUNCATE ${template.tables.join(', ')}`);
    for (const { table, columns, json } of template.rows) {
      await client.query(`INSERT INTO ${table} (${columns}) OVERRIDING SYSTEM VALUE SELECT ${columns} FROM json_populate_recordset(NULL::${table}, $1)`, [
        json,
      ]);
    }
    for (const { name, value, called } of template.sequences) await client.query('SELECT setval($1::regclass, $2::bigint, $3)', [name, value, called]);
    await client.query(
      `DELETE FROM pg_statistic WHERE starelid IN (SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE ${userSchemas})`,
    );
    await client.query('COMMIT');
    return true;
  });
}
