// Rendering a contract for one call: `{{arg}}` placeholders take the call's arguments and
// `[SECRET_NAME]`s take their values, in two renderings at once: `shown` (secrets still as names:
// dry runs, refusals, matching) and `sent` (the values: only the outgoing request). Secrets are
// substituted only in the contract's own text, never in an argument, so an argument that spells
// `[SOME_SECRET]` reaches the upstream as those characters.
//
// CLI commands: the template is split into words first (POSIX quoting: '…', "…", backslash; no
// expansion, no operators), then each `{{arg}}` is replaced inside its word. An argument the
// call did not give renders as nothing (a whole-value placeholder drops its key). An argument is
// therefore always part of exactly one argv entry, whatever characters it holds; no shell runs.

export const placeholder = /\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}/g;
const secret = /\[([A-Z][A-Z0-9_]*)\]/g;

export type Context = 'json' | 'url' | 'header' | 'text';

export class TemplateError extends Error {
  readonly code: 'ARGS_INVALID' | 'CLI_SYNTAX';
  readonly field?: string;
  constructor(code: 'ARGS_INVALID' | 'CLI_SYNTAX', message: string, field?: string) {
    super(message);
    this.code = code;
    this.field = field;
  }
}

export type Rendering = { shown: unknown; sent: unknown };

const asText = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

/** An argument the call did not give renders as nothing: the args schema says what is required. */
function argValue(args: Record<string, unknown>, name: string): unknown {
  return args[name];
}

const secretsOf = new WeakMap<object, readonly string[]>();

/** Secret names used in the contract's own text (arguments excluded); remembered per contract object (a cached row's). */
export function templateSecrets(template: unknown): readonly string[] {
  if (template === null || typeof template !== 'object') return namedSecrets(template);
  let names = secretsOf.get(template);
  if (!names) {
    names = Object.freeze(namedSecrets(template));
    secretsOf.set(template, names);
  }
  return names;
}

function namedSecrets(template: unknown): string[] {
  const found = new Set<string>();
  const visit = (v: unknown) => {
    if (typeof v === 'string') for (const m of v.replace(placeholder, '').matchAll(secret)) found.add(m[1]!);
    else if (Array.isArray(v)) v.forEach(visit);
    else if (v && typeof v === 'object')
      for (const [k, inner] of Object.entries(v)) {
        visit(k);
        visit(inner);
      }
  };
  visit(template);
  return [...found].sort();
}

function renderText(text: string, args: Record<string, unknown>, secrets: Record<string, string>, context: Context): Rendering {
  const whole = /^\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}$/.exec(text);
  if (whole && context === 'json') {
    const value = argValue(args, whole[1]!);
    return { shown: value, sent: value };
  }
  let shown = '';
  let sent = '';
  let last = 0;
  const literal = (part: string) => {
    shown += part;
    sent += part.replace(secret, (m, name: string) => secrets[name] ?? m);
  };
  for (const m of text.matchAll(placeholder)) {
    literal(text.slice(last, m.index));
    const raw = argValue(args, m[1]!);
    let value = raw === undefined ? '' : asText(raw);
    if (context === 'url') value = encodeURIComponent(value);
    if (context === 'header' && /[\r\n\0]/.test(value)) {
      throw new TemplateError(
        'ARGS_INVALID',
        `Argument ${JSON.stringify(m[1])}: expected text without line breaks (it goes into a header), got ${JSON.stringify(value)}.`,
        m[1],
      );
    }
    shown += value;
    sent += value;
    last = m.index + m[0].length;
  }
  literal(text.slice(last));
  return { shown, sent };
}

/** Renders any JSON value of a contract; strings by `context`, object keys as text. */
export function render(template: unknown, args: Record<string, unknown>, secrets: Record<string, string>, context: Context = 'json'): Rendering {
  if (typeof template === 'string') return renderText(template, args, secrets, context);
  if (Array.isArray(template)) {
    const parts = template.map((t) => render(t, args, secrets, context)).filter((p) => p.sent !== undefined);
    return { shown: parts.map((p) => p.shown), sent: parts.map((p) => p.sent) };
  }
  if (template && typeof template === 'object') {
    const shown: Record<string, unknown> = {};
    const sent: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(template)) {
      const key = renderText(k, args, secrets, 'text');
      const value = render(v, args, secrets, context);
      if (value.sent === undefined) continue;
      shown[key.shown as string] = value.shown;
      sent[key.sent as string] = value.sent;
    }
    return { shown, sent };
  }
  return { shown: template, sent: template };
}

/** Splits a command line into words, POSIX quoting, refusing what only a shell would interpret. */
export function splitWords(command: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  const refuse = (what: string) => {
    throw new TemplateError(
      'CLI_SYNTAX',
      `CLI command: expected one program and its words (the runner runs no shell), got ${what} in ${JSON.stringify(command)}.`,
    );
  };
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (c === "'") {
      const end = command.indexOf("'", i + 1);
      if (end < 0) refuse('an unclosed single quote');
      word += command.slice(i + 1, end);
      inWord = true;
      i = end;
    } else if (c === '"') {
      inWord = true;
      let j = i + 1;
      for (; j < command.length && command[j] !== '"'; j++) {
        const d = command[j]!;
        if (d === '\\' && j + 1 < command.length && '"\\$`\n'.includes(command[j + 1]!)) word += command[++j];
        else if (d === '$' || d === '`') refuse(`${d === '$' ? 'a $ expansion' : 'a backtick'} inside double quotes`);
        else word += d;
      }
      if (j >= command.length) refuse('an unclosed double quote');
      i = j;
    } else if (c === '\\') {
      if (i + 1 < command.length) word += command[++i];
      inWord = true;
    } else if (c === ' ' || c === '\t') {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else if (';&|<>`\n\r()'.includes(c) || (c === '$' && !/\{\{/.test(command.slice(i, i + 2)))) {
      refuse(`the shell operator ${JSON.stringify(c)}`);
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  if (words.length === 0) refuse('no program');
  return words;
}

/** A CLI contract's argument vector, rendered. */
export function renderCommand(command: string, args: Record<string, unknown>, secrets: Record<string, string>): { shown: string[]; sent: string[] } {
  const words = splitWords(command);
  const rendered = words.map((w) => renderText(w, args, secrets, 'text'));
  return { shown: rendered.map((r) => r.shown as string), sent: rendered.map((r) => r.sent as string) };
}
