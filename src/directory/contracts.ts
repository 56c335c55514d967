// The five contract shapes a way cell may hold, validated with zod at build.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { describeIssues } from '../validation.ts';

export const ContractShapes = ['HTTP', 'MCP', 'CLI', 'SEQUENCE', 'CODE'] as const;
export type ContractShape = (typeof ContractShapes)[number];

export const HttpMethods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;

const address = z.string().regex(/^(https?|wss?):\/\/[^\s/]+/i, 'an absolute http(s) or ws(s) URL');
const headers = z.record(z.string().min(1), z.string());

export const HttpContract = z.object({ method: z.enum(HttpMethods), url: address, headers: headers.optional(), body: z.unknown().optional() }).strict();
export const McpContract = z
  .object({
    method: z.literal('MCP'),
    server: z.string().min(1, 'an MCP server URL or stdio command'),
    headers: headers.optional(),
    tool: z.string().min(1),
    arguments: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();
export const CliContract = z.object({ method: z.literal('CLI'), command: z.string().min(1, 'a command line') }).strict();
export const CodeContract = z.object({ method: z.literal('CODE'), language: z.string().min(1), code: z.string().min(1, 'code to paste') }).strict();
export const StepContract = z.union([HttpContract, McpContract, CliContract, CodeContract]);
export const SequenceContract = z.array(StepContract).min(1, 'at least one step');

export type HttpContract = z.output<typeof HttpContract>;
export type McpContract = z.output<typeof McpContract>;
export type CliContract = z.output<typeof CliContract>;
export type CodeContract = z.output<typeof CodeContract>;
export type StepContract = z.output<typeof StepContract>;
export type Contract = StepContract | StepContract[];

const stepSchemas: Record<Exclude<ContractShape, 'SEQUENCE'>, z.ZodType> = {
  HTTP: HttpContract,
  MCP: McpContract,
  CLI: CliContract,
  CODE: CodeContract,
};

/** The shape a value claims by its `method` (or by being an array). */
export function claimedShape(value: unknown): ContractShape {
  if (Array.isArray(value)) return 'SEQUENCE';
  const method = value && typeof value === 'object' ? (value as { method?: unknown }).method : undefined;
  return method === 'MCP' || method === 'CLI' || method === 'CODE' ? method : 'HTTP';
}

export const shapeOf = (contract: Contract): ContractShape => claimedShape(contract);

export type ContractCheck = { ok: true; contract: Contract; shape: ContractShape } | { ok: false; shape: ContractShape; message: string };

/** Validates one parsed value against the shape it claims; the message says what was expected and what arrived. */
export function checkContract(value: unknown): ContractCheck {
  const shape = claimedShape(value);
  if (value === null || typeof value !== 'object') {
    return { ok: false, shape, message: `expected a JSON contract (an object with a method, or an array of them), got ${JSON.stringify(value)}` };
  }
  if (shape === 'SEQUENCE') {
    const steps = value as unknown[];
    if (steps.length === 0) return { ok: false, shape, message: 'expected a sequence of at least one step, got []' };
    for (const [i, step] of steps.entries()) {
      const inner = checkContract(step);
      if (!inner.ok) return { ok: false, shape, message: `step ${i + 1} (${inner.shape}): ${inner.message}` };
      if (inner.shape === 'SEQUENCE') return { ok: false, shape, message: `step ${i + 1}: expected a single call, got a nested sequence` };
    }
    return { ok: true, shape, contract: value as Contract };
  }
  const parsed = stepSchemas[shape].safeParse(value);
  if (parsed.success) return { ok: true, shape, contract: parsed.data as Contract };
  return { ok: false, shape, message: `${shape} contract ${describeIssues(parsed.error, value).join('; ')}` };
}

/** Parses a cell's text as JSON, then checks it. */
export function checkContractCell(cell: string): ContractCheck {
  let value: unknown;
  try {
    value = JSON.parse(cell);
  } catch (error) {
    return { ok: false, shape: 'HTTP', message: `expected one JSON contract, got text that is not JSON (${(error as Error).message})` };
  }
  return checkContract(value);
}

/** JSON with object keys sorted at every depth: the bytes a contract's hash is taken over. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

export function contractSha256(contract: unknown): string {
  return createHash('sha256').update(canonicalJson(contract)).digest('hex');
}

const secretPattern = /\[([A-Z][A-Z0-9_]*)\]/g;

/** Every `[SECRET_NAME]` written anywhere in a value (keys and strings), sorted and unique. */
export function secretNamesIn(value: unknown): string[] {
  const found = new Set<string>();
  const visit = (v: unknown) => {
    if (typeof v === 'string') for (const m of v.matchAll(secretPattern)) found.add(m[1]!);
    else if (Array.isArray(v)) v.forEach(visit);
    else if (v && typeof v === 'object')
      for (const [k, inner] of Object.entries(v)) {
        visit(k);
        visit(inner);
      }
  };
  visit(value);
  return [...found].sort();
}
