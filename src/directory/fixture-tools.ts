// The fixture Directory's tool rows: a name becomes a description, its ways and an args schema.
import { human, localNouns, type Rng, sentence, services } from './fixture-words.ts';

export const schemaFor = (props: string[]) =>
  JSON.stringify({
    type: 'object',
    properties: Object.fromEntries(props.map((p) => [p, { type: p.endsWith('limit') ? 'integer' : 'string' }])),
    required: props.slice(0, 1),
  });

export type ToolSpec = { name: string; description: string; ways: Record<string, unknown>; upstream?: unknown; args: string[]; kind: string };

export function toolFor(r: Rng, name: string, index: number): ToolSpec {
  const [prefix] = name.split('_');
  const service = services.find((s) => s.prefix === prefix);
  const object = (name.split('_').slice(2).join('_') || name.split('_')[1] || 'item').toLowerCase();
  const args = [r.pick(['id', 'query', 'to', 'text', 'path', 'account']), ...(r.chance(0.5) ? ['limit'] : [])];
  const argsObj = Object.fromEntries(args.map((a) => [a, `{{${a}}}`]));
  const description = sentence(
    r,
    `${human(name.split('_').slice(1).join('_'))} ${service ? `in the ${service.noun}` : `through ${localNouns[prefix!] ?? 'this machine'}`}`,
  );
  if (service) {
    const call = {
      method: r.pick(['GET', 'POST', 'POST', 'PATCH']),
      url: `${service.host}/${object.replace(/_/g, '/')}s`,
      headers: { authorization: `Bearer [${service.secret}]`, 'content-type': 'application/json' },
      body: argsObj,
    };
    const ways: Record<string, unknown> = { 'way:http': call };
    if (index % 7 === 0)
      ways['way:mcp'] = {
        method: 'MCP',
        server: `https://mcp.${new URL(service.host).hostname}/mcp`,
        headers: { authorization: `Bearer [${service.secret}]` },
        tool: human(name).replace(/ /g, '_'),
        arguments: argsObj,
      };
    return { name, description, ways, upstream: call, args, kind: 'http' };
  }
  const shape = index % 5;
  if (shape === 0 || prefix === 'TERMINAL' || prefix === 'MAC') {
    return {
      name,
      description,
      ways: { 'way:cli': { method: 'CLI', command: `${prefix!.toLowerCase()}-cli ${human(name).split(' ').slice(1).join('-')} --json '{{args}}'` } },
      args,
      kind: 'cli',
    };
  }
  if (shape === 1) {
    return {
      name,
      description,
      ways: { 'way:mcp': { method: 'MCP', server: 'http://127.0.0.1:4000/mcp', headers: {}, tool: name, arguments: argsObj } },
      args,
      kind: 'mcp',
    };
  }
  if (shape === 2) {
    return {
      name,
      description,
      ways: {
        way: [
          { method: 'CLI', command: `${prefix!.toLowerCase()}-cli prepare --json '{{args}}'` },
          { method: 'POST', url: `http://127.0.0.1:4000/api/tools/${name}`, headers: { 'content-type': 'application/json' }, body: argsObj },
        ],
      },
      args,
      kind: 'sequence',
    };
  }
  if (shape === 3) {
    return {
      name,
      description,
      ways: { 'way:code': { method: 'CODE', language: 'javascript', code: `export default async (args) => ({ tool: ${JSON.stringify(name)}, args })` } },
      args,
      kind: 'code',
    };
  }
  return {
    name,
    description,
    ways: { 'way:http': { method: 'POST', url: `http://127.0.0.1:4000/api/tools/${name}`, headers: { 'content-type': 'application/json' }, body: argsObj } },
    args,
    kind: 'http',
  };
}

export function toolHeader(): string[] {
  return ['name', 'description', 'way', 'way: http', 'way: mcp', 'way: cli', 'way: code', 'args schema', 'upstream', 'type', 'kind', 'id'];
}
