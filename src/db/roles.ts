// Least privilege on PostgreSQL: an owner role that owns the schema (migrations run as it) and a
// server role that may only read and append the ledger, plus exactly the updates its bookkeeping makes.
import type { SqlQueryable } from './sql.ts';

export type RoleNames = { owner: string; server: string };

export const defaultRoles: RoleNames = { owner: 'dirledger_owner', server: 'dirledger_server' };

const roleName = /^[a-z_][a-z0-9_]{0,62}$/;

/** Throws naming the value when a role name is not a plain lowercase identifier. */
export function checkRoleName(name: string, what: string): string {
  if (!roleName.test(name)) throw new Error(`${what}: expected a lowercase identifier (letters, digits, _; at most 63), got ${JSON.stringify(name)}`);
  return name;
}

/**
 * What the server role may do, table by table. Every UPDATE or DELETE the server makes is listed
 * here and nowhere else: the collector's position (an upsert), the tool counts kept by trigger, the
 * chain head, token use counters, and the Directory's derived rows (rebuilt from section files).
 */
export const serverGrants: readonly { table: string; privileges: string; update?: string; why: string }[] = [
  { table: 'ledger_event', privileges: 'SELECT, INSERT', why: 'append-only' },
  { table: 'blob', privileges: 'SELECT, INSERT', why: 'append-only' },
  { table: 'ledger_batch', privileges: 'SELECT, INSERT', why: 'append-only' },
  { table: 'contract_version', privileges: 'SELECT, INSERT', why: 'append-only' },
  { table: 'token_revocation', privileges: 'SELECT, INSERT', why: 'append-only: revokeToken adds a row, every server reads them' },
  { table: 'collector', privileges: 'SELECT, INSERT', update: 'delivered_position, updated_at', why: "a collector's position moves forward on append" },
  { table: 'ledger_tool_count', privileges: 'SELECT, INSERT', update: 'events', why: 'kept by trigger as events are appended' },
  { table: 'ledger_chain', privileges: 'SELECT', update: 'seq, link', why: 'the chain head moves forward on append' },
  { table: 'token_uses', privileges: 'SELECT, INSERT', update: 'uses, last_used_at', why: 'use counts move forward' },
  { table: 'model_price', privileges: 'SELECT, INSERT', why: 'append-only: the price an event was charged with' },
  { table: 'token_spend', privileges: 'SELECT, INSERT', update: 'spent, reserved, updated_at', why: 'a call holds its worst case, then settles' },
  {
    table: 'token_spend_hold',
    privileges: 'SELECT, INSERT, DELETE',
    why: "a call's hold, written down until it settles or the sweep gives it back (the BUDGET_RELEASE event is the record)",
  },
  { table: 'directory_section', privileges: 'SELECT, INSERT, UPDATE, DELETE', why: 'derived from the section files, rebuilt when they change' },
  { table: 'directory_row', privileges: 'SELECT, INSERT, UPDATE, DELETE', why: 'derived from the section files, rebuilt when they change' },
  { table: '_prisma_migrations', privileges: 'SELECT', why: 'the start checks that nothing is pending' },
];

/** The SQL that creates (or brings up to date) both roles; run it as a superuser in the ledger's database. */
export function rolesSql({ owner, server }: RoleNames): string {
  checkRoleName(owner, 'owner role');
  checkRoleName(server, 'server role');
  const grants = serverGrants.map((g) =>
    [
      `-- ${g.table}: ${g.why}`,
      `GRANT ${g.privileges} ON "${g.table}" TO ${server};`,
      ...(g.update ? [`GRANT UPDATE (${g.update}) ON "${g.table}" TO ${server};`] : []),
    ].join('\n'),
  );
  return `-- dirledger least privilege (run as a superuser in the ledger's database; safe to run again after migrations).
-- ${owner} owns the schema and every object in it: run migrations as it (DATABASE_URL=…${owner}… dirledger migrate).
-- ${server} runs the server: it reads and appends, and may not update or delete history, disable a
-- trigger (only an owner may) or set session_replication_role (only a superuser may).
DO $roles$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${owner}') THEN CREATE ROLE ${owner} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS; END IF;
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${server}') THEN CREATE ROLE ${server} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS NOINHERIT; END IF;
  EXECUTE format('GRANT CONNECT ON DATABASE %I TO ${owner}, ${server}', current_database());
END $roles$;
GRANT USAGE, CREATE ON SCHEMA public TO ${owner};
GRANT USAGE ON SCHEMA public TO ${server};
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
DO $owner$ DECLARE r record; BEGIN
  FOR r IN SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm')
             AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.objid = c.oid AND d.deptype = 'e') LOOP
    EXECUTE format('ALTER TABLE public.%I OWNER TO ${owner}', r.relname);
  END LOOP;
  -- Sequences a column owns moved with their table; any other follows here.
  FOR r IN SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE n.nspname = 'public' AND c.relkind = 'S'
             AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.objid = c.oid AND d.deptype IN ('a', 'i')) LOOP
    EXECUTE format('ALTER SEQUENCE public.%I OWNER TO ${owner}', r.relname);
  END LOOP;
  FOR r IN SELECT p.oid::regprocedure AS f FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public'
             AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e') LOOP
    EXECUTE format('ALTER FUNCTION %s OWNER TO ${owner}', r.f);
  END LOOP;
  FOR r IN SELECT t.typname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace WHERE n.nspname = 'public' AND t.typtype = 'e'
             AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.objid = t.oid AND d.deptype = 'e') LOOP
    EXECUTE format('ALTER TYPE public.%I OWNER TO ${owner}', r.typname);
  END LOOP;
END $owner$;
REVOKE ALL ON ALL TABLES IN SCHEMA public FROM ${server};
REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM ${server};
${grants.join('\n')}
GRANT USAGE ON SEQUENCE ledger_position_seq TO ${server};
-- Tables later migrations add: readable and appendable, nothing more, until granted here.
ALTER DEFAULT PRIVILEGES FOR ROLE ${owner} IN SCHEMA public GRANT SELECT, INSERT ON TABLES TO ${server};
ALTER DEFAULT PRIVILEGES FOR ROLE ${owner} IN SCHEMA public GRANT USAGE ON SEQUENCES TO ${server};
`;
}

/** Why the connected role has more power than the server needs (empty when it has none of these). */
export async function privilegeWarnings(sql: SqlQueryable): Promise<string[]> {
  const [row] = await sql.query<{ role: string; superuser: boolean; owner: boolean }>(
    `SELECT current_user AS role, (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) AS superuser,
       coalesce((SELECT pg_has_role(current_user, c.relowner, 'USAGE') FROM pg_class c WHERE c.oid = to_regclass('public.ledger_event')), false) AS owner`,
  );
  if (!row) return [];
  const warnings: string[] = [];
  if (row.superuser)
    warnings.push(
      `the server connects as ${row.role}, a superuser: it could disable the ledger's triggers and rewrite history. Run it as the role \`dirledger db roles\` creates.`,
    );
  else if (row.owner)
    warnings.push(
      `the server connects as ${row.role}, which owns the ledger's tables: it could disable their triggers. Run it as the role \`dirledger db roles\` creates.`,
    );
  return warnings;
}
