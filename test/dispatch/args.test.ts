// checkArgs fills defaults into a copy of the arguments, never into the caller's objects, and an own __proto__ key stays data.
import { describe, expect, it } from 'vitest';
import { checkArgs } from '../../src/dispatch/args.ts';
import { JSON_MAX_DEPTH } from '../../src/limits.ts';

const hostile = JSON.parse(
  '{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}},"nul":"a\\u0000b","lone":"\\ud800","list":[1,"two",null,true,{"k":[]}],"n":-0.5e-300,"":""}',
);

function nested(depth: number): unknown {
  let value: unknown = 'bottom';
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { v: value };
  return value;
}

describe('checkArgs', () => {
  it('fills defaults into its copy and leaves the caller’s arguments as they were', () => {
    const schema = { type: 'object', properties: { q: { type: 'string' }, opts: { type: 'object', properties: { n: { type: 'number', default: 3 } } } } };
    const input = { q: 'x', opts: {} };
    const checked = checkArgs(schema, input);
    expect(checked).toEqual({ ok: true, args: { q: 'x', opts: { n: 3 } } });
    expect(input).toEqual({ q: 'x', opts: {} });
  });

  it('keeps an own __proto__ argument as data, checked like any other key', () => {
    const strict = { type: 'object', properties: { q: { type: 'string' } }, additionalProperties: false };
    const refused = checkArgs(strict, hostile);
    expect(refused.ok).toBe(false);
    const open = checkArgs({ type: 'object' }, hostile);
    expect(open.ok && Object.hasOwn(open.args, '__proto__') && Object.getPrototypeOf(open.args)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses arguments nested deeper than the limit before copying them', () => {
    const checked = checkArgs(undefined, { deep: nested(JSON_MAX_DEPTH + 5) });
    expect(checked).toMatchObject({ ok: false, field: '(the arguments)' });
  });
});
