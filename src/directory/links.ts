// The credential-free links (LINK_URL, LINK_REST, LINK_MCP) a scoped token is rendered into: which
// doors it verifies at and may call a tool through, and which tools its caveats name exactly.
import type { Grant } from '../auth/verdict.ts';
import { parseCaveat, toolAllowed } from '../auth/caveats.ts';
import type { Door } from '../context/door.ts';
import { DomainError, ErrorCode } from '../errors.ts';
import type { Context } from '../graphql/context.ts';
import type { LinkForm } from './forms.ts';

/** The door each link comes in through. */
export const linkDoor = { LINK_URL: 'URL', LINK_REST: 'REST', LINK_MCP: 'MCP' } as const satisfies Record<LinkForm, Door>;

/**
 * The links a scoped token may be rendered into for one tool: those whose door it verifies at now
 * (signature, time window, audience, doors), when it may call the tool and has uses left. Throws
 * UNAUTHENTICATED or FORBIDDEN saying which check failed.
 */
export async function liveLinks(ctx: Context, token: string, tool: string, links: readonly LinkForm[]): Promise<LinkForm[]> {
  const { authority } = ctx.services;
  let grant: Grant | undefined;
  let refused: { message: string; limit: string; status: number } | undefined;
  const live: LinkForm[] = [];
  for (const form of links) {
    const checked = authority.authenticate(token, linkDoor[form]);
    if (!checked.ok) {
      refused ??= checked.refusal;
      continue;
    }
    const tools = authority.allowsTool(checked.grant, linkDoor[form], tool);
    if (tools) {
      refused ??= tools;
      continue;
    }
    grant = checked.grant;
    live.push(form);
  }
  if (!grant) {
    if (!refused || refused.status === 401)
      throw new DomainError(ErrorCode.UNAUTHENTICATED, `Invalid token: it does not verify at this server. ${refused?.message ?? ''}`.trim(), {
        field: 'token',
      });
    throw new DomainError(ErrorCode.FORBIDDEN, `The token cannot link ${JSON.stringify(tool)}: ${refused.message}`, { field: 'token', limit: refused.limit });
  }
  const spent = (await authority.usesOf(grant)).find((u) => u.used >= u.max);
  if (spent)
    throw new DomainError(ErrorCode.FORBIDDEN, `The token cannot link ${JSON.stringify(tool)}: all ${spent.max} of its uses are spent (${spent.caveat}).`, {
      field: 'token',
      limit: 'uses',
    });
  return live;
}

/** The tool names a token's `tools` caveats name exactly (no prefix) and every one of them allows. */
export function exactToolNames(caveats: readonly string[]): string[] {
  const lists = caveats.flatMap((text) => {
    try {
      const caveat = parseCaveat(text);
      return caveat.kind === 'tools' ? [caveat.names] : [];
    } catch {
      return [];
    }
  });
  const names = new Set(lists.flat().filter((n) => !n.endsWith('*')));
  return [...names].filter((n) => lists.every((list) => toolAllowed(list, n)));
}
