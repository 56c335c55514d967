// checkArgs fills defaults into a copy of the arguments, never into the caller's objects, and an own __proto__ key stays data.
import { isDeepStrictEqual } from 'node:util';
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

  it('copies what structuredClone copies: JSON deep and apart from the input, other objects by structuredClone, a function refused', () => {
    const open = checkArgs({ type: 'object' }, hostile);
    // node's deep equality: vitest's strict equality compares `constructor`, which this input owns as data.
    expect(open.ok && isDeepStrictEqual(open.args, structuredClone(hostile))).toBe(true);
    expect(open.ok && (open.args.list as unknown[])[4]).not.toBe(hostile.list[4]);
    const at = new Date('2026-12-02T00:00:00Z');
    const withObjects = checkArgs({ type: 'object' }, { at, map: new Map([['k', 1]]), nothing: null });
    expect(withObjects.ok && withObjects.args).toStrictEqual({ at, map: new Map([['k', 1]]), nothing: null });
    expect(withObjects.ok && withObjects.args.at).not.toBe(at);
    expect(() => checkArgs({ type: 'object' }, { run: () => 1 })).toThrow(/could not be cloned/);
  });

  it('refuses arguments nested deeper than the limit before copying them', () => {
    const checked = checkArgs(undefined, { deep: nested(JSON_MAX_DEPTH + 5) });
    expect(checked).toMatchObject({ ok: false, field: '(the arguments)' });
  });
});
