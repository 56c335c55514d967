// From a recorded call back to its contract: LedgerEvent.tool (the row as it is now) and
// LedgerEvent.contract (the exact contract it ran, by hash, after the row changes).
import { builder } from '../graphql/builder.ts';
import { loadBatched } from '../graphql/loader.ts';
import { nodeIdField, registerNode } from '../graphql/node.ts';
import { LedgerEventRef } from '../ledger/schema.ts';
import type { ContractShape } from './contracts.ts';
import { ContractShapeEnum, contractsBySha, DirectoryRowRef } from './schema.ts';

type RecordedShape = { form: string; sha256: string; tool: string | null };
const RecordedContractRef = builder.objectRef<RecordedShape>('RecordedContract').implement({
  description: 'The exact contract an event ran, kept by its hash after the row changes.',
  fields: (t) => ({
    form: t.exposeString('form', { description: 'A ContractForm name, or the way column (e.g. "way: http").' }),
    sha256: t.exposeString('sha256', { description: "SHA-256 of the contract's canonical JSON, lowercase hex." }),
    shape: t.field({
      description: 'Which kind of call it is; null only when the hash names no stored contract.',
      type: ContractShapeEnum,
      nullable: true,
      resolve: async (c, _a, ctx) => ((await contractsBySha(ctx, c.sha256))?.shape as ContractShape | undefined) ?? null,
    }),
    json: t.field({
      type: 'JSON',
      nullable: true,
      description: 'Null only when the hash names no stored contract.',
      resolve: async (c, _a, ctx) => (await contractsBySha(ctx, c.sha256))?.contract ?? null,
    }),
  }),
});

builder.prismaObjectFields(LedgerEventRef, (t) => ({
  tool: t.field({
    type: DirectoryRowRef,
    nullable: true,
    description: "The Directory row of this event's tool, as it is now (toolName is the recorded name).",
    select: { tool: true },
    resolve: async (e, _a, ctx) => {
      if (!e.tool) return null;
      return (
        (await loadBatched(ctx, 'tool-row', e.tool, async (names) => {
          const rows = await ctx.services.db.prisma.directoryRow.findMany({ where: { name: { in: names } }, orderBy: { type: 'asc' } });
          const out = new Map<string, (typeof rows)[number]>();
          for (const name of names) {
            const row = ctx.services.directory.rowMeant(rows, name, 'any');
            if (row) out.set(name, row);
          }
          return out;
        })) ?? null
      );
    },
  }),
  contract: t.field({
    type: RecordedContractRef,
    nullable: true,
    description: 'The identity of the contract this event ran (form and hash), resolvable after the row changes.',
    select: { contractForm: true, contractSha256: true, tool: true },
    resolve: (e) => (e.contractForm && e.contractSha256 ? { form: e.contractForm, sha256: e.contractSha256, tool: e.tool } : null),
  }),
}));

/** "sha256:form": the hash first, since a way column's form holds a colon. */
const contractKey = (c: RecordedShape) => `${c.sha256}:${c.form}`;

builder.objectField(RecordedContractRef, 'nodeId', (t) => t.field(nodeIdField<RecordedShape>('RecordedContract', contractKey)));
registerNode(RecordedContractRef, async (id, ctx) => {
  const sha256 = id.slice(0, 64);
  if (id[64] !== ':' || id.length === 65) return null;
  return (await contractsBySha(ctx, sha256)) ? { sha256, form: id.slice(65), tool: null } : null;
});
