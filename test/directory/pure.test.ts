import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { checkContract, checkContractCell, shapeOf } from '../../src/directory/contracts.ts';
import { generateDirectory, renderSection, scaleMix, SeedRows } from '../../src/directory/fixtures.ts';
import { type CredentialPlace, formParts } from '../../src/directory/form-parts.ts';
import { ContractForms, exampleArgs, FormNames, LinkForms, renderForms } from '../../src/directory/forms.ts';
import { findRetired, parseRetiredTargets } from '../../src/directory/retired.ts';
import { rowMeant } from '../../src/directory/row-meant.ts';
import { parseSection, sectionFileType } from '../../src/directory/sections.ts';
import { demoDirectoryDir } from '../../src/services.ts';

const csv = (rows: string[][]) => rows.map((r) => r.map((c) => (/[",\n]/.test(c) ? `"${c.replace(/"/g, '""')}"` : c)).join(',')).join('\n');

describe('section format', () => {
  const header = ['name', 'description', 'way: http', 'type', 'kind', 'id'];
  const data = [
    ['A_TOOL', 'does a', '{"method":"GET","url":"https://a.example/x"}', 'tool', 'http', '1'],
    ['B_TOOL', 'does b', '{"method":"CLI","command":"echo b"}', 'tool', 'cli', '2'],
  ];

  it('matches columns by label, never by position: any column order gives the same rows', () => {
    const base = parseSection('tool.csv', csv([header, ...data]));
    const order = [5, 2, 0, 4, 1, 3];
    const reordered = parseSection('tool.csv', csv([order.map((i) => header[i]!), ...data.map((r) => order.map((i) => r[i]!))]));
    const relabelled = parseSection('tool.csv', csv([[' NAME ', 'Description', 'WAY_http', 'Type', 'KIND', 'Id'], ...data]));
    expect(base.problems).toEqual([]);
    expect(reordered.rows).toEqual(base.rows);
    expect(relabelled.rows).toEqual(base.rows);
    expect(base.rows[0]!.ways).toEqual({ 'way:http': data[0]![2] });
  });

  it('reports a header it does not recognise and never guesses at it', () => {
    const s = parseSection('tool.csv', csv([[...header, 'wya: rest', 'colour'], ...data.map((r) => [...r, '{"method":"CLI","command":"x"}', 'red'])]));
    expect(s.unknownHeaders).toEqual(['wya: rest', 'colour']);
    expect(s.rows[0]!.ways).toEqual({ 'way:http': data[0]![2] });
    expect(JSON.stringify(s.rows)).not.toContain('red');
  });

  it('reads JSON sections keyed by the same labels', () => {
    const s = parseSection('tool.json', JSON.stringify([{ Name: 'A_TOOL', 'way: cli': { method: 'CLI', command: 'echo' } }]));
    expect(s.problems).toEqual([]);
    expect(checkContractCell(s.rows[0]!.ways['way:cli']!).ok).toBe(true);
  });

  it('names files that are not sections', () => {
    expect(sectionFileType('_aliases.csv')).toBeNull();
    expect(sectionFileType('outside API.csv')).toEqual({ type: 'outside API', format: 'csv' });
  });
});

describe('which row a name means', () => {
  const way = { HTTP: { header: 'way: http', sha256: 'a'.repeat(64), shape: 'HTTP' } };
  const row = (type: string, name: string, ways: object = {}) => ({ type, name, ways });

  it('the tool row first, else the first type alphabetically, whatever order the rows come in', () => {
    const rows = [row('zeta', 'X', way), row('tool', 'X'), row('alpha', 'X', way), row('alpha', 'Y')];
    expect(rowMeant(rows, 'X', 'any')).toBe(rows[1]);
    expect(rowMeant(rows, 'X', 'tool')).toBe(rows[1]);
    expect(rowMeant([rows[0]!, rows[2]!], 'X', 'any')).toBe(rows[2]);
    expect(rowMeant(rows, 'Y', 'any')).toBe(rows[3]);
  });

  it('the runner counts only rows with a way; Tool reads count the tool row or a row with a way', () => {
    const rows = [row('zeta', 'X', way), row('tool', 'X'), row('alpha', 'Y'), row('beta', 'Z', way), row('alpha', 'Z')];
    expect(rowMeant(rows, 'X', 'runnable')).toBe(rows[0]);
    expect(rowMeant(rows, 'X', 'tool')).toBe(rows[1]);
    expect(rowMeant(rows, 'Y', 'tool')).toBeNull();
    expect(rowMeant(rows, 'Y', 'runnable')).toBeNull();
    expect(rowMeant(rows, 'Z', 'tool')).toBe(rows[3]);
    expect(rowMeant(rows, 'Z', 'any')).toBe(rows[4]);
  });

  it('an unknown name, or a name that differs only in case, means no row', () => {
    const rows = [row('tool', 'ECHO', way)];
    expect(rowMeant(rows, 'echo', 'any')).toBeNull();
    expect(rowMeant(rows, 'NOPE', 'runnable')).toBeNull();
    expect(rowMeant([], 'ECHO', 'any')).toBeNull();
  });
});

describe('contract shapes', () => {
  it('accepts each shape and rejects a malformed one of each, saying what was expected', () => {
    const good = [
      { method: 'POST', url: 'https://x.example/a', headers: { a: 'b' }, body: { q: 1 } },
      { method: 'MCP', server: 'https://x.example/mcp', headers: {}, tool: 'T', arguments: {} },
      { method: 'CLI', command: 'date' },
      [
        { method: 'CLI', command: 'date' },
        { method: 'GET', url: 'https://x.example' },
      ],
      { method: 'CODE', language: 'javascript', code: 'x' },
    ];
    expect(good.map((g) => checkContract(g).ok)).toEqual([true, true, true, true, true]);
    const bad = [
      { method: 'POST', url: 'not a url' },
      { method: 'MCP', server: 'https://x.example/mcp' },
      { method: 'CLI' },
      [
        { method: 'CLI', command: 'date' },
        { method: 'CODE', language: 'js' },
      ],
      { method: 'CODE', language: 'javascript', code: 'x', extra: 1 },
    ];
    const results = bad.map((b) => checkContract(b));
    expect(results.map((r) => r.ok)).toEqual([false, false, false, false, false]);
    expect(results.map((r) => r.shape)).toEqual(['HTTP', 'MCP', 'CLI', 'SEQUENCE', 'CODE']);
    expect(results.map((r) => (r.ok ? '' : r.message))).toEqual([
      expect.stringMatching(/url: expected an absolute http/),
      expect.stringMatching(/tool: expected string/),
      expect.stringMatching(/command: expected string/),
      expect.stringMatching(/step 2 \(CODE\).*code/),
      expect.stringMatching(/unknown extra/),
    ]);
  });
});

describe('retired build', () => {
  const targets = parseRetiredTargets('old.example.com, https://legacy.example.net/v1/');
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const hiding: [string, unknown][] = [
    ['a URL', { method: 'GET', url: 'https://old.example.com/api' }],
    ['a subdomain with a port', { method: 'GET', url: 'http://API.Old.Example.com:8443/x' }],
    ['a header', { method: 'GET', url: 'https://new.example/x', headers: { 'x-forward-to': 'old.example.com' } }],
    [
      'a JSON-RPC body',
      { method: 'POST', url: 'https://new.example/rpc', body: { jsonrpc: '2.0', method: 'fetch', params: { url: 'https://old.example.com/a' } } },
    ],
    [
      'a JSON-RPC body sent as a string',
      { method: 'POST', url: 'https://new.example/rpc', body: JSON.stringify({ jsonrpc: '2.0', params: { target: 'old.example.com' } }) },
    ],
    ['a shell command', { method: 'CLI', command: 'curl -s https://old.example.com/x | jq .' }],
    ['a base64-encoded shell command', { method: 'CLI', command: `echo ${b64('curl https://old.example.com/x')} | base64 -d | sh` }],
    ['a URL-encoded relay target', { method: 'GET', url: `https://relay.example/fetch?url=${encodeURIComponent('https://old.example.com/x')}` }],
    [
      'a twice URL-encoded relay target',
      { method: 'GET', url: `https://relay.example/fetch?url=${encodeURIComponent(encodeURIComponent('https://old.example.com/x'))}` },
    ],
    ['a relay target field', { method: 'POST', url: 'https://relay.example/go', body: { target: 'old.example.com' } }],
    ['an MCP server URL', { method: 'MCP', server: 'https://old.example.com/mcp', tool: 'x', arguments: {} }],
    [
      'a later step of a sequence',
      [
        { method: 'CLI', command: 'date' },
        { method: 'GET', url: 'https://old.example.com' },
      ],
    ],
    ['code', { method: 'CODE', language: 'javascript', code: "await fetch('https://old.example.com/x')" }],
    [
      'a base64 argument of an MCP call',
      { method: 'MCP', server: 'https://ok.example/mcp', tool: 'relay', arguments: { payload: b64('{"url":"https://old.example.com"}') } },
    ],
    ['a URL prefix', { method: 'GET', url: 'https://legacy.example.net/v1/things' }],
    ['escaped JSON text', { method: 'CLI', command: 'node -e "fetch(\\"https:\\/\\/old.example.com\\/x\\")"' }],
  ];
  it.each(hiding)('finds the retired build in %s', (_label, contract) => {
    expect(findRetired(contract, targets)).not.toBeNull();
  });
  it('does not refuse look-alikes or other paths of a prefixed host', () => {
    for (const ok of ['https://notold.example.com/', 'https://old.example.com.evil.net/', 'https://legacy.example.net/v2/x', 'https://example.com']) {
      expect(findRetired({ method: 'GET', url: ok }, targets), ok).toBeNull();
    }
  });
});

describe('the contract writer', () => {
  const demo = readdirSync(demoDirectoryDir).filter((f) => f.startsWith('tool.'));
  const tools = demo.flatMap((f) => parseSection(f, readFileSync(path.join(demoDirectoryDir, f))).rows);

  it('renders every form for every demo tool, each valid in its shape', () => {
    expect(tools.length).toBeGreaterThanOrEqual(5);
    for (const tool of tools) {
      const upstream = tool.upstream ? (JSON.parse(tool.upstream) as never) : undefined;
      const forms = renderForms(
        { tool: tool.name, args: exampleArgs(tool.argsSchema ? JSON.parse(tool.argsSchema) : {}) },
        { baseUrl: 'http://127.0.0.1:4000', ...(upstream ? { upstream } : {}) },
      );
      expect(forms.map((f) => f.form)).toEqual(upstream ? [...ContractForms] : ContractForms.filter((f) => f !== 'UPSTREAM'));
      for (const f of forms) {
        const check = checkContract(f.json);
        expect(check.ok, `${tool.name} ${f.form}: ${check.ok ? '' : check.message}`).toBe(true);
        expect(shapeOf(f.json)).toBe(f.shape);
        expect(f.door).toBeTruthy();
        if (f.form === 'IN_PROCESS') expect(f.secretNames).toEqual([]);
        else if (f.form !== 'UPSTREAM') expect(f.secretNames, `${tool.name} ${f.form}`).toContain('DIRLEDGER_TOKEN');
        if (f.form === 'UPSTREAM') expect(f.json).toEqual(upstream);
        else expect(JSON.stringify(f.form === 'MCP_CLIENT_CONFIG' ? f.text : f.json)).toContain(tool.name);
      }
    }
  });

  it('writes secrets as names only', () => {
    const forms = renderForms({ tool: 'X', args: {} }, { baseUrl: 'http://h:1', upstream: { method: 'GET', url: 'https://s.example/?k=[S_KEY]' } });
    expect(forms.find((f) => f.form === 'UPSTREAM')!.secretNames).toEqual(['S_KEY']);
    expect(forms.find((f) => f.form === 'CURL')!.text).toContain("'authorization: Bearer [DIRLEDGER_TOKEN]'");
  });

  it('puts the credential where each door reads it, as [DIRLEDGER_TOKEN], deterministically', () => {
    const call = { tool: 'ECHO', args: { text: 'hi' } };
    const forms = renderForms(call, { baseUrl: 'http://h:1' });
    expect(renderForms(call, { baseUrl: 'http://h:1' })).toEqual(forms);
    const of = (form: string) => forms.find((f) => f.form === form)!;
    const bearer = { authorization: 'Bearer [DIRLEDGER_TOKEN]' };
    for (const form of ['REST', 'URL', 'DISPATCH', 'DRY_RUN', 'GRAPHQL_HTTP', 'GRAPHQL_SSE', 'WEBHOOK', 'SSE', 'APPLE_SHORTCUT', 'MCP_HTTP']) {
      expect((of(form).json as { headers: Record<string, string> }).headers, form).toMatchObject(bearer);
    }
    for (const form of ['CURL', 'HTTPIE']) expect(of(form).text, form).toMatch(/authorization: ?Bearer \[DIRLEDGER_TOKEN\]/);
    for (const form of ['JAVASCRIPT', 'TYPESCRIPT']) expect(of(form).text, form).toContain("authorization: 'Bearer [DIRLEDGER_TOKEN]'");
    expect(of('PYTHON').text).toContain('"authorization": "Bearer [DIRLEDGER_TOKEN]"');
    expect(of('GO').text).toContain('req.Header.Set("authorization", "Bearer [DIRLEDGER_TOKEN]")');
    expect(of('POWERSHELL').text).toContain("-Headers @{ 'authorization' = 'Bearer [DIRLEDGER_TOKEN]' }");
    expect(of('SDK').text).toContain("token: '[DIRLEDGER_TOKEN]'");
    expect(of('GRAPHQL_WS').text).toContain("connectionParams: { authorization: 'Bearer [DIRLEDGER_TOKEN]' }");
    expect(JSON.parse(of('MCP_CLIENT_CONFIG').text!.split('\n# then')[0]!).mcpServers.dirledger.headers).toEqual(bearer);
    expect((of('MCP_CLIENT_CONFIG').json as { command: string }).command).toContain("--header 'authorization: Bearer [DIRLEDGER_TOKEN]'");
    // Browsers cannot set a WebSocket's headers, and URLs are kept: the token goes in the first message.
    expect(of('WEBSOCKET').text).toContain('new WebSocket("ws://h:1/api/ws")');
    expect(of('WEBSOCKET').text).toContain(`ws.send(JSON.stringify({ type: 'auth', token: "[DIRLEDGER_TOKEN]" }));`);
    // The command lines read it from the environment.
    expect((of('CLI').json as { command: string }).command).toMatch(/^DIRLEDGER_TOKEN=\[DIRLEDGER_TOKEN\] dirledger call ECHO /);
    expect((of('NPX').json as { command: string }).command).toMatch(/^DIRLEDGER_TOKEN=\[DIRLEDGER_TOKEN\] npx --yes dirledger call ECHO /);
    expect((of('SSH').json as { command: string }).command).toMatch(/^ssh h 'DIRLEDGER_TOKEN=\[DIRLEDGER_TOKEN\] dirledger call ECHO /);
    expect((of('MCP_STDIO').json as { server: string }).server).toBe('DIRLEDGER_TOKEN=[DIRLEDGER_TOKEN] dirledger mcp');
    expect(JSON.stringify(of('IN_PROCESS'))).not.toContain('DIRLEDGER_TOKEN');
    expect(forms.map((f) => f.form)).not.toContain('LINK_URL');
  });

  it('renders the three credential-free links only with a token, each carrying it and no other credential', () => {
    const token = 'AgEJZGlybGVkZ2VyAh-example_token';
    const call = { tool: 'ECHO', args: { text: 'hi there' } };
    expect(renderForms(call, { baseUrl: 'http://h:1' }, LinkForms)).toEqual([]);
    const links = renderForms(call, { baseUrl: 'http://h:1', linkToken: token }, LinkForms);
    expect(links.map((f) => f.form)).toEqual([...LinkForms]);
    const [url, rest, mcp] = links as [(typeof links)[0], (typeof links)[0], (typeof links)[0]];
    expect(url.json).toEqual({ method: 'GET', url: `http://h:1/api/tools/ECHO?text=hi+there&token=${token}` });
    expect(url.text).toBe((url.json as { url: string }).url);
    expect(rest.json).toEqual({
      method: 'POST',
      url: `http://h:1/api/tools/ECHO?token=${token}`,
      headers: { 'content-type': 'application/json' },
      body: { text: 'hi there' },
    });
    expect(rest.text).toBe(
      `curl -sS -X POST 'http://h:1/api/tools/ECHO?token=${token}' -H 'content-type: application/json' --data-binary '{"text":"hi there"}'`,
    );
    expect(mcp.json).toEqual({ method: 'MCP', server: `http://h:1/mcp?token=${token}`, tool: 'ECHO', arguments: { text: 'hi there' } });
    expect(JSON.parse(mcp.text!.split('\n# then')[0]!)).toEqual({ mcpServers: { dirledger: { type: 'http', url: `http://h:1/mcp?token=${token}` } } });
    for (const link of links) {
      expect(link.secretNames).toEqual([]);
      expect(JSON.stringify(link)).not.toMatch(/authorization/i);
      expect(checkContract(link.json).ok).toBe(true);
    }
  });

  it('says for every form what varies (sent to, credential, wrapping), checked against the rendered form; name and args are in every one', () => {
    const call = { tool: 'ECHO_7', args: { text: 'same-args-marker' } };
    const forms = renderForms(
      call,
      { baseUrl: 'http://h:1', linkToken: 'link-token-x', upstream: { method: 'GET', url: 'https://s.example/?k=[S_KEY]' } },
      FormNames,
    );
    expect(forms.map((f) => f.form)).toEqual([...FormNames]);
    const evidence: Record<CredentialPlace, RegExp> = {
      HEADER: /authorization["']?(?::|,| =) ?["']?Bearer \[DIRLEDGER_TOKEN\]/,
      CLIENT_CONFIG: /--header 'authorization: Bearer \[DIRLEDGER_TOKEN\]'/,
      CONNECTION_INIT: /connectionParams: \{ authorization: 'Bearer \[DIRLEDGER_TOKEN\]' \}/,
      ENV: /DIRLEDGER_TOKEN=\[DIRLEDGER_TOKEN\]/,
      CLIENT_OPTION: /token: '\[DIRLEDGER_TOKEN\]'/,
      FIRST_MESSAGE: /type: 'auth', token: "\[DIRLEDGER_TOKEN\]"/,
      LINK: /[?&]token=link-token-x/,
      NONE: /^(?![\s\S]*DIRLEDGER_TOKEN)/,
      UPSTREAM: /\[S_KEY\]/,
    };
    const places = new Set<string>();
    for (const f of forms) {
      const parts = formParts(f.form, f.secretNames);
      const written = `${JSON.stringify(f.json)}\n${f.text ?? ''}`;
      expect(written, `${f.form}: ${parts.credentialPlace}`).toMatch(evidence[parts.credentialPlace]);
      if (parts.credentialPlace === 'LINK') expect(written).not.toContain('[DIRLEDGER_TOKEN]');
      expect(parts.sentTo, f.form).toBeTruthy();
      expect(parts.wrapping, f.form).toBeTruthy();
      places.add(parts.credentialPlace);
      if (f.form !== 'UPSTREAM') {
        expect(written, f.form).toContain('ECHO_7');
        expect(written, f.form).toContain('same-args-marker');
      }
    }
    expect(places.size).toBe(Object.keys(evidence).length);
    expect(formParts('UPSTREAM', ['S_KEY']).credential).toContain('[S_KEY]');
    expect(formParts('UPSTREAM', []).credential).toBe('none');
  });
});

describe('fixtures', () => {
  it('is deterministic, has the seed mix and the rows the resolver examples need', () => {
    const a = generateDirectory({ rows: SeedRows, seed: 1 });
    const counts = Object.fromEntries(Object.entries(a).map(([t, r]) => [t, r.length]));
    expect(counts).toMatchObject({ variable: 17525, article: 3239, tool: 1583, flow: 785, credential: 201, task: 143, 'outside API': 1 });
    expect(Object.values(counts).reduce((x, y) => x + y)).toBe(SeedRows);
    expect(a.tool!.map((r) => r.name)).toEqual(expect.arrayContaining(['IMSG_SEND', 'BLOOIO_SEND_MESSAGE']));
    expect(a.credential!.map((r) => r.name)).toContain('TERMINAL_KEY');
    expect(a.file!.filter((r) => r.name!.startsWith('tests/') && r.name!.includes('tests')).length).toBeGreaterThan(0);
    expect(JSON.stringify(a).toLowerCase()).not.toContain('tiktok');
    const small = generateDirectory({ rows: 500, seed: 7 });
    expect(renderSection(small.tool!, 'csv')).toBe(renderSection(generateDirectory({ rows: 500, seed: 7 }).tool!, 'csv'));
    expect(Object.values(scaleMix(500)).reduce((x, y) => x + y)).toBe(500);
    for (const [type, rows] of Object.entries(small)) {
      const parsed = parseSection(`${type}.csv`, renderSection(rows, 'csv'));
      expect(parsed.problems, type).toEqual([]);
      expect(parsed.unknownHeaders, type).toEqual([]);
      for (const row of parsed.rows) for (const cell of Object.values(row.ways)) expect(checkContractCell(cell).ok).toBe(true);
    }
  });
});
