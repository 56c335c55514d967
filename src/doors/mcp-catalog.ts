// What the MCP doors list: every runnable Directory tool, with its args schema as the inputSchema.
import type { Directory } from '../directory/directory.ts';
import type { PrismaClient } from '../generated/prisma/client.ts';

export type McpTool = {
  name: string;
  description: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
};

/** The MCP tool answered by the resolver (the Directory's rows are never named in lower case). */
export const FindToolName = 'find';

export const FindTool: McpTool = {
  name: FindToolName,
  description:
    'Find Directory rows from any words: ranked rows, each with the layer that matched, a reason and the words that matched. The same answer as GET /api/directory/resolve and the GraphQL resolve query.',
  inputSchema: {
    type: 'object',
    properties: {
      query: { type: 'string', description: 'What you are looking for, in any words.' },
      minScore: { type: 'integer', description: 'Refuse anything scored below this.' },
      limit: { type: 'integer', description: 'At most this many rows (default 10).' },
      types: { type: 'array', items: { type: 'string' }, description: 'Only rows of these types.' },
    },
    required: ['query'],
    additionalProperties: false,
  },
};

/** What tools/list lists: every runnable tool with its schema, or only find and call (names as a resource). */
export type McpCatalog = 'tools' | 'names';
export const McpCatalogs: readonly McpCatalog[] = ['tools', 'names'];

/** The MCP tool that runs a Directory row by name (listed instead of every row with catalog `names`). */
export const CallToolName = 'call';

export const CallTool: McpTool = {
  name: CallToolName,
  description: `Run a Directory tool by name. Every runnable name is in the resource dirledger://directory/names; "${FindToolName}" finds one from any words.`,
  inputSchema: {
    type: 'object',
    properties: {
      name: { type: 'string', description: 'The tool, as named in the Directory (e.g. ECHO).' },
      args: { type: 'object', description: "Its arguments, as its row's args schema says (default {})." },
      dryRun: { type: 'boolean', description: 'Render the outgoing request(s) without sending anything.' },
    },
    required: ['name'],
    additionalProperties: false,
  },
};

/** The names-only catalog: every runnable tool the caller may call, one name a line. */
export const NamesResource = {
  uri: 'dirledger://directory/names',
  name: 'directory-names',
  title: 'Runnable Directory tools, names only',
  description: 'Every runnable tool this token may call, one name a line; run one with the "call" tool.',
  mimeType: 'text/plain',
};

/** Rows listed per tools/list page; the next page is asked for with nextCursor. */
export const pageSize = 500;

function inputSchemaOf(argsSchema: unknown): McpTool['inputSchema'] {
  if (argsSchema && typeof argsSchema === 'object' && !Array.isArray(argsSchema)) {
    return { ...(argsSchema as Record<string, unknown>), type: 'object' };
  }
  return { type: 'object' };
}

const encodeCursor = (offset: number) => Buffer.from(`tools:${offset}`).toString('base64url');

/** The offset a cursor names, or undefined when it is not one of ours. */
export function decodeCursor(cursor: string): number | undefined {
  const m = /^tools:(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  return m ? Number(m[1]) : undefined;
}

/** Every runnable name in section order (the tool section first, then any row with a way), only those `allowed` when given. */
export async function runnableToolNames(prisma: PrismaClient, directory: Pick<Directory, 'rowMeant'>, allowed?: (name: string) => boolean): Promise<string[]> {
  return (await runnableRows(prisma, directory, allowed)).map((row) => row.name);
}

/** One page of runnable tools in section order (the tool section first, then any row with a way), only those `allowed` when given. */
export async function listRunnableTools(
  prisma: PrismaClient,
  directory: Pick<Directory, 'rowMeant'>,
  offset: number,
  allowed?: (name: string) => boolean,
): Promise<{ tools: McpTool[]; nextCursor?: string }> {
  const tools = (await runnableRows(prisma, directory, allowed)).map((row) => ({
    name: row.name,
    description: row.description,
    inputSchema: inputSchemaOf(row.argsSchema),
  }));
  const page = tools.slice(offset, offset + pageSize);
  return offset + pageSize < tools.length ? { tools: page, nextCursor: encodeCursor(offset + pageSize) } : { tools: page };
}

async function runnableRows(prisma: PrismaClient, directory: Pick<Directory, 'rowMeant'>, allowed?: (name: string) => boolean) {
  const rows = await prisma.directoryRow.findMany({
    where: { runnable: true, name: { notIn: [FindToolName, CallToolName] } },
    select: { name: true, type: true, description: true, argsSchema: true, ways: true },
    orderBy: [{ type: 'asc' }, { ordinal: 'asc' }],
  });
  // A name used by several types is one tool: the row it means (Directory.rowMeant), the tool section's first.
  const byName = new Map<string, typeof rows>();
  for (const r of rows) byName.get(r.name)?.push(r) ?? byName.set(r.name, [r]);
  const position = new Map(rows.map((r, i) => [r, i]));
  const meant = [...byName].flatMap(([name, named]) => directory.rowMeant(named, name, 'tool') ?? []);
  meant.sort((a, b) => Number(b.type === 'tool') - Number(a.type === 'tool') || position.get(a)! - position.get(b)!);
  return allowed ? meant.filter((row) => allowed(row.name)) : meant;
}
