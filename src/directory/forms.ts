// The contract writer: every form is derived from one canonical call {"tool": NAME, "args": {...}}.
// Only where the call is sent, where the credential goes and how name and args are wrapped vary.
// Pure: no secret value is ever in reach, only names.
import { TOKEN_SECRET_NAME } from '../secrets/tokens.ts';
import { secretNamesIn, shapeOf, type Contract, type ContractShape } from './contracts.ts';

/** The forms, in the issue's order; UPSTREAM only for rows that wrap an outside service. */
export const ContractForms = [
  'REST',
  'URL',
  'DISPATCH',
  'DRY_RUN',
  'GRAPHQL_HTTP',
  'GRAPHQL_WS',
  'GRAPHQL_SSE',
  'MCP_HTTP',
  'MCP_STDIO',
  'MCP_CLIENT_CONFIG',
  'CURL',
  'CLI',
  'HTTPIE',
  'WEBHOOK',
  'JAVASCRIPT',
  'TYPESCRIPT',
  'PYTHON',
  'GO',
  'IN_PROCESS',
  'SDK',
  'NPX',
  'SSH',
  'APPLE_SHORTCUT',
  'WEBSOCKET',
  'SSE',
  'POWERSHELL',
  'UPSTREAM',
] as const;
/** The credential-free links: rendered only with a live scoped token, which they carry inside. */
export const LinkForms = ['LINK_URL', 'LINK_REST', 'LINK_MCP'] as const;
export type LinkForm = (typeof LinkForms)[number];
/** Every form name: the enum a form is typed with. */
export const FormNames = [...ContractForms, ...LinkForms] as const;
export type ContractForm = (typeof FormNames)[number];

/** The placeholder every form but IN_PROCESS and UPSTREAM carries where the bearer token goes. */
export const TokenPlaceholder = `[${TOKEN_SECRET_NAME}]`;

/** The doors a form needs (built by the dispatch issue; the forms are already what they will run). */
export const Doors = {
  REST: 'POST /api/tools/:name',
  URL: 'GET /api/tools/:name',
  DISPATCH: 'POST /api/dispatch',
  DRY_RUN: 'POST /api/dispatch ({"dryRun": true})',
  GRAPHQL_HTTP: 'POST /graphql (mutation dispatch)',
  GRAPHQL_WS: 'WS /graphql (graphql-transport-ws, mutation dispatch)',
  GRAPHQL_SSE: 'POST /graphql (accept: text/event-stream, mutation dispatch)',
  MCP_HTTP: 'POST /mcp (MCP streamable HTTP, tools/call)',
  MCP_STDIO: 'dirledger mcp (MCP over stdio, tools/call)',
  MCP_CLIENT_CONFIG: 'POST /mcp (MCP streamable HTTP)',
  CURL: 'POST /api/tools/:name',
  CLI: 'dirledger call (POST /api/dispatch)',
  HTTPIE: 'POST /api/tools/:name',
  WEBHOOK: 'POST /hooks/:name',
  JAVASCRIPT: 'POST /api/dispatch',
  TYPESCRIPT: 'POST /graphql (mutation dispatch)',
  PYTHON: 'POST /api/dispatch',
  GO: 'POST /api/dispatch',
  IN_PROCESS: 'services.dispatcher.dispatch (in process)',
  SDK: 'POST /api/dispatch (client.tools.<name>)',
  NPX: 'dirledger call via npx (POST /api/dispatch)',
  SSH: 'ssh, then dirledger call (POST /api/dispatch)',
  APPLE_SHORTCUT: 'POST /api/tools/:name',
  WEBSOCKET: 'WS /api/ws (JSON {"type": "call"})',
  SSE: 'POST /api/dispatch (accept: text/event-stream)',
  POWERSHELL: 'POST /api/tools/:name',
  UPSTREAM: 'the outside service itself',
  LINK_URL: 'GET /api/tools/:name?…&token=',
  LINK_REST: 'POST /api/tools/:name?token=',
  LINK_MCP: 'POST /mcp?token= (MCP streamable HTTP)',
} as const satisfies Record<ContractForm, string>;

/** The query parameter a link carries its token in (the doors read it as the credential). */
export const TokenParam = 'token';

export type CanonicalCall = { tool: string; args: Record<string, unknown> };

export type RenderOptions = {
  /** This server's public base URL, e.g. http://127.0.0.1:4000 (no trailing slash). */
  baseUrl: string;
  /** Host for the SSH form (default: the base URL's host). */
  sshHost?: string;
  /** The row's upstream contract: with it the UPSTREAM form is rendered. */
  upstream?: Contract;
  /** A live scoped token (checked by the caller): with it the LINK_* forms are rendered, the token inside. */
  linkToken?: string;
};

export type RenderedForm = {
  form: ContractForm;
  shape: ContractShape;
  door: string;
  json: Contract;
  /** Pasteable text, where it helps. */
  text: string | null;
  secretNames: string[];
};

/** The GraphQL operation the GraphQL forms send; the dispatch issue implements `dispatch`. */
export const DispatchMutation =
  'mutation Dispatch($tool: String!, $args: JSON) { dispatch(tool: $tool, args: $args) { tool actionId outcome status output error { code message } } }';

/** POSIX single-quoting. */
export function shellQuote(text: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}
const psQuote = (text: string) => `'${text.replace(/'/g, "''")}'`;

/** An example argument object from a JSON Schema: defaults and examples first, then a value of each property's type. */
export function exampleArgs(schema: unknown): Record<string, unknown> {
  const props = (schema && typeof schema === 'object' && (schema as { properties?: unknown }).properties) || {};
  if (typeof props !== 'object') return {};
  const out: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(props as Record<string, Record<string, unknown>>)) {
    const p = raw ?? {};
    if ('default' in p) out[key] = p.default;
    else if (Array.isArray(p.examples) && p.examples.length) out[key] = p.examples[0];
    else if (Array.isArray(p.enum) && p.enum.length) out[key] = p.enum[0];
    else if (p.type === 'integer' || p.type === 'number') out[key] = 1;
    else if (p.type === 'boolean') out[key] = false;
    else if (p.type === 'array') out[key] = [];
    else if (p.type === 'object') out[key] = {};
    else out[key] = `<${key}>`;
  }
  return out;
}

function queryString(args: Record<string, unknown>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(args)) q.append(k, typeof v === 'string' ? v : JSON.stringify(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** Renders the requested forms (default: all that apply) for one canonical call. */
export function renderForms(call: CanonicalCall, options: RenderOptions, forms: readonly ContractForm[] = ContractForms): RenderedForm[] {
  const base = options.baseUrl.replace(/\/+$/, '');
  const name = call.tool;
  const args = call.args;
  const canonical = { tool: name, args };
  const argsJson = JSON.stringify(args);
  const canonicalJson = JSON.stringify(canonical);
  const bearer = `Bearer ${TokenPlaceholder}`;
  const auth: Record<string, string> = { authorization: bearer };
  const jsonHeaders = { 'content-type': 'application/json', ...auth };
  const toolUrl = `${base}/api/tools/${encodeURIComponent(name)}`;
  const dispatchUrl = `${base}/api/dispatch`;
  const graphqlUrl = `${base}/graphql`;
  const wsBase = base.replace(/^http/, 'ws');
  const host = options.sshHost ?? new URL(base).hostname;
  const gqlBody = { query: DispatchMutation, variables: canonical };
  const authShell = ` -H ${shellQuote(`authorization: ${bearer}`)}`;
  const authJsHeader = `, authorization: '${bearer}'`;
  // The CLI reads the token from DIRLEDGER_TOKEN; an assignment word is never glob-expanded, so the placeholder needs no quotes.
  const tokenEnv = `${TOKEN_SECRET_NAME}=${TokenPlaceholder}`;
  const callArgs = `call ${shellQuote(name)} --args ${shellQuote(argsJson)}`;
  const cliCall = `dirledger ${callArgs} --server ${shellQuote(base)}`;
  const link = options.linkToken;
  const ident = /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`;

  const make = (form: ContractForm, json: Contract, text: string | null = null): RenderedForm => ({
    form,
    shape: shapeOf(json),
    door: Doors[form],
    json,
    text,
    secretNames: secretNamesIn(json),
  });
  const code = (form: ContractForm, language: string, body: string) => make(form, { method: 'CODE', language, code: body }, body);
  const cli = (form: ContractForm, command: string) => make(form, { method: 'CLI', command }, command);

  const render: Record<ContractForm, () => RenderedForm | null> = {
    REST: () => make('REST', { method: 'POST', url: toolUrl, headers: jsonHeaders, body: args }),
    URL: () => {
      const url = `${toolUrl}${queryString(args)}`;
      return make('URL', { method: 'GET', url, headers: auth }, url);
    },
    DISPATCH: () => make('DISPATCH', { method: 'POST', url: dispatchUrl, headers: jsonHeaders, body: canonical }),
    DRY_RUN: () => make('DRY_RUN', { method: 'POST', url: dispatchUrl, headers: jsonHeaders, body: { ...canonical, dryRun: true } }),
    GRAPHQL_HTTP: () =>
      make(
        'GRAPHQL_HTTP',
        { method: 'POST', url: graphqlUrl, headers: { ...jsonHeaders, accept: 'application/graphql-response+json' }, body: gqlBody },
        DispatchMutation,
      ),
    GRAPHQL_WS: () =>
      code(
        'GRAPHQL_WS',
        'javascript',
        [
          `import { createClient } from 'graphql-ws';`,
          `const client = createClient({ url: ${JSON.stringify(`${wsBase}/graphql`)}, connectionParams: { authorization: '${bearer}' } });`,
          `const result = await new Promise((resolve, reject) => {`,
          `  let value;`,
          `  client.subscribe(${JSON.stringify(gqlBody)}, { next: (v) => (value = v), error: reject, complete: () => resolve(value) });`,
          `});`,
          `console.log(JSON.stringify(result));`,
          `await client.dispose();`,
        ].join('\n'),
      ),
    GRAPHQL_SSE: () => make('GRAPHQL_SSE', { method: 'POST', url: graphqlUrl, headers: { ...jsonHeaders, accept: 'text/event-stream' }, body: gqlBody }),
    MCP_HTTP: () =>
      make(
        'MCP_HTTP',
        { method: 'MCP', server: `${base}/mcp`, headers: auth, tool: name, arguments: args },
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
      ),
    MCP_STDIO: () =>
      make(
        'MCP_STDIO',
        { method: 'MCP', server: `${tokenEnv} dirledger mcp`, headers: {}, tool: name, arguments: args },
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
      ),
    MCP_CLIENT_CONFIG: () => {
      const command = `claude mcp add --transport http dirledger ${shellQuote(`${base}/mcp`)} --header ${shellQuote(`authorization: ${bearer}`)}`;
      const config = { mcpServers: { dirledger: { type: 'http', url: `${base}/mcp`, headers: auth } } };
      return make(
        'MCP_CLIENT_CONFIG',
        { method: 'CLI', command },
        `${JSON.stringify(config, null, 2)}\n# then call the tool ${JSON.stringify(name)} with ${argsJson}`,
      );
    },
    CURL: () => cli('CURL', `curl -sS -X POST ${shellQuote(toolUrl)} -H 'content-type: application/json'${authShell} --data-binary ${shellQuote(argsJson)}`),
    CLI: () => cli('CLI', `${tokenEnv} ${cliCall}`),
    HTTPIE: () =>
      cli(
        'HTTPIE',
        `http --ignore-stdin POST ${shellQuote(toolUrl)} content-type:application/json ${shellQuote(`authorization:${bearer}`)} --raw ${shellQuote(argsJson)}`,
      ),
    WEBHOOK: () => make('WEBHOOK', { method: 'POST', url: `${base}/hooks/${encodeURIComponent(name)}`, headers: jsonHeaders, body: args }),
    JAVASCRIPT: () =>
      code(
        'JAVASCRIPT',
        'javascript',
        [
          `const response = await fetch(${JSON.stringify(dispatchUrl)}, {`,
          `  method: 'POST',`,
          `  headers: { 'content-type': 'application/json'${authJsHeader} },`,
          `  body: JSON.stringify(${canonicalJson}),`,
          `});`,
          `console.log(JSON.stringify(await response.json()));`,
        ].join('\n'),
      ),
    TYPESCRIPT: () =>
      code(
        'TYPESCRIPT',
        'typescript',
        [
          `import { print } from 'graphql';`,
          `import { graphql } from './gql/index.ts'; // generated by graphql-codegen from schema.graphql`,
          `const Dispatch = graphql(\`${DispatchMutation}\`);`,
          `const response = await fetch(${JSON.stringify(graphqlUrl)}, {`,
          `  method: 'POST',`,
          `  headers: { 'content-type': 'application/json'${authJsHeader} },`,
          `  body: JSON.stringify({ query: print(Dispatch), variables: ${canonicalJson} }),`,
          `});`,
          `console.log(JSON.stringify(await response.json()));`,
        ].join('\n'),
      ),
    PYTHON: () =>
      code(
        'PYTHON',
        'python',
        [
          'import json, urllib.request',
          `request = urllib.request.Request(${JSON.stringify(dispatchUrl)}, method="POST",`,
          `    data=${JSON.stringify(canonicalJson)}.encode(),`,
          `    headers={"content-type": "application/json", "authorization": "${bearer}"})`,
          'with urllib.request.urlopen(request) as response:',
          '    print(response.read().decode())',
        ].join('\n'),
      ),
    GO: () =>
      code(
        'GO',
        'go',
        [
          'package main',
          '',
          'import (',
          '\t"fmt"',
          '\t"io"',
          '\t"net/http"',
          '\t"strings"',
          ')',
          '',
          'func main() {',
          `\treq, _ := http.NewRequest("POST", ${JSON.stringify(dispatchUrl)}, strings.NewReader(${JSON.stringify(canonicalJson)}))`,
          '\treq.Header.Set("content-type", "application/json")',
          `\treq.Header.Set("authorization", "${bearer}")`,
          '\tres, err := http.DefaultClient.Do(req)',
          '\tif err != nil {',
          '\t\tpanic(err)',
          '\t}',
          '\tdefer res.Body.Close()',
          '\tbody, _ := io.ReadAll(res.Body)',
          '\tfmt.Println(string(body))',
          '}',
        ].join('\n'),
      ),
    IN_PROCESS: () => code('IN_PROCESS', 'typescript', `const result = await app.services.dispatcher.dispatch(${canonicalJson});`),
    SDK: () =>
      code(
        'SDK',
        'typescript',
        [
          `import { createClient } from 'dirledger/client';`,
          `const client = createClient({ baseUrl: ${JSON.stringify(base)}, token: '${TokenPlaceholder}' });`,
          `const result = await client.tools${ident}(${argsJson});`,
        ].join('\n'),
      ),
    NPX: () => cli('NPX', `${tokenEnv} npx --yes dirledger ${callArgs} --server ${shellQuote(base)}`),
    SSH: () => cli('SSH', `ssh ${shellQuote(host)} ${shellQuote(`${tokenEnv} dirledger ${callArgs}`)}`),
    APPLE_SHORTCUT: () =>
      make(
        'APPLE_SHORTCUT',
        { method: 'POST', url: toolUrl, headers: jsonHeaders, body: args },
        [
          'Action: Get Contents of URL',
          `URL: ${toolUrl}`,
          'Method: POST',
          `Headers: ${Object.entries(jsonHeaders)
            .map(([k, v]) => `${k}: ${v}`)
            .join('; ')}`,
          `Request Body: JSON ${argsJson}`,
        ].join('\n'),
      ),
    WEBSOCKET: () =>
      code(
        'WEBSOCKET',
        'javascript',
        [
          // Browsers cannot set headers on a WebSocket, and a URL is kept by proxies: the token goes in the first message.
          `const ws = new WebSocket(${JSON.stringify(`${wsBase}/api/ws`)});`,
          `ws.onopen = () => {`,
          `  ws.send(JSON.stringify({ type: 'auth', token: ${JSON.stringify(TokenPlaceholder)} }));`,
          `  ws.send(JSON.stringify({ type: 'call', id: crypto.randomUUID(), ...${canonicalJson} }));`,
          `};`,
          `ws.onmessage = (event) => { console.log(event.data); ws.close(); };`,
        ].join('\n'),
      ),
    SSE: () => make('SSE', { method: 'POST', url: dispatchUrl, headers: { ...jsonHeaders, accept: 'text/event-stream' }, body: canonical }),
    POWERSHELL: () => {
      const headers = `@{ ${Object.entries(auth)
        .map(([k, v]) => `${psQuote(k)} = ${psQuote(v)}`)
        .join('; ')} }`;
      return code(
        'POWERSHELL',
        'powershell',
        `Invoke-RestMethod -Method Post -Uri ${psQuote(toolUrl)} -ContentType 'application/json' -Headers ${headers} -Body ${psQuote(argsJson)}`,
      );
    },
    UPSTREAM: () => (options.upstream ? make('UPSTREAM', options.upstream, null) : null),
    LINK_URL: () => {
      if (!link) return null;
      const url = `${toolUrl}${queryString({ ...args, [TokenParam]: link })}`;
      return make('LINK_URL', { method: 'GET', url }, url);
    },
    LINK_REST: () => {
      if (!link) return null;
      const url = `${toolUrl}?${TokenParam}=${encodeURIComponent(link)}`;
      return make(
        'LINK_REST',
        { method: 'POST', url, headers: { 'content-type': 'application/json' }, body: args },
        `curl -sS -X POST ${shellQuote(url)} -H 'content-type: application/json' --data-binary ${shellQuote(argsJson)}`,
      );
    },
    LINK_MCP: () => {
      if (!link) return null;
      const server = `${base}/mcp?${TokenParam}=${encodeURIComponent(link)}`;
      const config = { mcpServers: { dirledger: { type: 'http', url: server } } };
      return make(
        'LINK_MCP',
        { method: 'MCP', server, tool: name, arguments: args },
        `${JSON.stringify(config, null, 2)}\n# then call the tool ${JSON.stringify(name)} with ${argsJson}`,
      );
    },
  };
  const out: RenderedForm[] = [];
  for (const form of forms) {
    const r = render[form]();
    if (r) out.push(r);
  }
  return out;
}
