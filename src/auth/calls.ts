// The runner's authority hook: the grant of the invocation a call runs in decides, once per call,
// whether its token may call this tool, reach these paths, and spend one more use.
import { currentInvocation } from '../context/request.ts';
import type { Authority } from './authority.ts';
import type { Refusal } from './verdict.ts';

/** Argument names whose values are paths, for `folders` caveats. */
const PATH_ARGS = new Set(['path', 'paths', 'file', 'files', 'filename', 'folder', 'folders', 'dir', 'directory', 'cwd']);

export type CallAuthorizer = {
  /** Before the row is looked up: the call power and the tools caveats. */
  tool(tool: string): Refusal | null;
  /** Once the args are valid: folders, then one use (not for a dry run, which sends nothing). */
  call(call: { tool: string; rowType: string; args: Record<string, unknown>; argsSchema: unknown; dryRun: boolean }): Promise<Refusal | null>;
};

export function callAuthorizer(authority: Authority): CallAuthorizer {
  const current = () => {
    const invocation = currentInvocation();
    return invocation?.grant ? { grant: invocation.grant, door: invocation.door } : undefined;
  };
  return {
    tool(tool) {
      const at = current();
      return at ? authority.allowsTool(at.grant, at.door, tool) : null;
    },
    async call({ tool, rowType, args, argsSchema, dryRun }) {
      const at = current();
      if (!at) return null;
      const paths = pathsOf(args, argsSchema);
      if (rowType === 'file') paths.unshift({ where: 'the file row', path: tool });
      const outside = authority.allowsPaths(at.grant, at.door, tool, paths);
      if (outside) return outside;
      return dryRun ? null : authority.consumeUse(at.grant, at.door, tool);
    },
  };
}

function pathsOf(args: Record<string, unknown>, schema: unknown): { where: string; path: string }[] {
  const props = (schema as { properties?: Record<string, { format?: unknown }> } | null)?.properties ?? {};
  const out: { where: string; path: string }[] = [];
  for (const [name, value] of Object.entries(args)) {
    if (!PATH_ARGS.has(name.toLowerCase()) && props[name]?.format !== 'path') continue;
    for (const item of Array.isArray(value) ? value : [value]) {
      if (typeof item === 'string') out.push({ where: `argument ${name}`, path: item });
    }
  }
  return out;
}
