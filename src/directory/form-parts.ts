// What varies between the forms of one canonical call {"tool": NAME, "args": {...}} (the seed's
// contracts page): where the call is sent, where the credential goes, how name and args are wrapped.
// The tool's name and arguments are the same in every form.
import { TOKEN_SECRET_NAME } from '../secrets/tokens.ts';
import { Doors, TokenParam, type ContractForm } from './forms.ts';

/** Where a form puts the credential. */
export const CredentialPlaces = ['HEADER', 'CLIENT_CONFIG', 'CONNECTION_INIT', 'ENV', 'CLIENT_OPTION', 'FIRST_MESSAGE', 'LINK', 'NONE', 'UPSTREAM'] as const;
export type CredentialPlace = (typeof CredentialPlaces)[number];

export type FormParts = {
  /** Where the call is sent (the door). */
  sentTo: string;
  credentialPlace: CredentialPlace;
  /** Where the credential goes, in words. */
  credential: string;
  /** How the tool's name and arguments are wrapped. */
  wrapping: string;
};

const token = `[${TOKEN_SECRET_NAME}]`;
/** Where each place puts the credential, in words (also the GraphQL enum's value descriptions). */
export const credentialWords: Record<CredentialPlace, string> = {
  HEADER: `the authorization header: Bearer ${token}`,
  CLIENT_CONFIG: `the MCP client's configured authorization header: Bearer ${token}`,
  CONNECTION_INIT: `graphql-ws's connection_init payload {authorization: "Bearer ${token}"}`,
  ENV: `the environment variable ${TOKEN_SECRET_NAME}=${token}`,
  CLIENT_OPTION: `the client's token option (sent as the authorization header)`,
  FIRST_MESSAGE: `the first message {"type": "auth", "token": "${token}"}`,
  LINK: `inside the link: the ?${TokenParam}= query parameter, no header`,
  NONE: 'none: the call runs inside the server',
  UPSTREAM: "the outside service's own secrets, by name",
};

const body = 'the arguments as the JSON body; the name in the path';
const canonicalBody = 'the canonical call {tool, args} as the JSON body';
const variables = 'the canonical call {tool, args} as the variables of mutation dispatch';
const toolsCall = 'tools/call with params {name, arguments}';
const command = 'dirledger call NAME --args JSON';

const table: Record<ContractForm, [CredentialPlace, string]> = {
  REST: ['HEADER', body],
  URL: ['HEADER', 'the arguments as query parameters; the name in the path'],
  DISPATCH: ['HEADER', canonicalBody],
  DRY_RUN: ['HEADER', 'the canonical call with "dryRun": true as the JSON body'],
  GRAPHQL_HTTP: ['HEADER', variables],
  GRAPHQL_WS: ['CONNECTION_INIT', variables],
  GRAPHQL_SSE: ['HEADER', variables],
  MCP_HTTP: ['HEADER', toolsCall],
  MCP_STDIO: ['ENV', toolsCall],
  MCP_CLIENT_CONFIG: ['CLIENT_CONFIG', `a server entry; the client then sends ${toolsCall}`],
  CURL: ['HEADER', body],
  CLI: ['ENV', command],
  HTTPIE: ['HEADER', body],
  WEBHOOK: ['HEADER', 'the arguments as the JSON body; the name in the hook path'],
  JAVASCRIPT: ['HEADER', canonicalBody],
  TYPESCRIPT: ['HEADER', `${variables} (a typed document)`],
  PYTHON: ['HEADER', canonicalBody],
  GO: ['HEADER', canonicalBody],
  IN_PROCESS: ['NONE', 'the canonical call as the argument of dispatcher.dispatch'],
  SDK: ['CLIENT_OPTION', 'client.tools.NAME(args)'],
  NPX: ['ENV', command],
  SSH: ['ENV', `${command}, run on the remote host`],
  APPLE_SHORTCUT: ['HEADER', body],
  WEBSOCKET: ['FIRST_MESSAGE', 'a {"type": "call"} message carrying the canonical call'],
  SSE: ['HEADER', `${canonicalBody}; the answer comes as events`],
  POWERSHELL: ['HEADER', body],
  UPSTREAM: ['UPSTREAM', "the outside service's own request, as the row's upstream contract writes it"],
  LINK_URL: ['LINK', 'the arguments as query parameters; the name in the path'],
  LINK_REST: ['LINK', body],
  LINK_MCP: ['LINK', toolsCall],
};

/** The parts of one rendered form that vary between forms; `secretNames` names an upstream's secrets. */
export function formParts(form: ContractForm, secretNames: readonly string[] = []): FormParts {
  const [credentialPlace, wrapping] = table[form];
  let credential = credentialWords[credentialPlace];
  if (credentialPlace === 'UPSTREAM') credential = secretNames.length ? `${credential}: ${secretNames.map((n) => `[${n}]`).join(', ')}` : 'none';
  return { sentTo: Doors[form], credentialPlace, credential, wrapping };
}
