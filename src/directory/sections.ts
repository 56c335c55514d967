// A section is one file per type (`<type>.csv` or `<type>.json`): a header row of labels, then
// one row per entry. This module reads the bytes into rows keyed by canonical label (pure).
import { createHash } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import { classifyHeader, type Column } from './labels.ts';

export const SectionFormats = ['csv', 'json'] as const;
export type SectionFormat = (typeof SectionFormats)[number];

/** One entry of a section, its cells keyed by canonical label. `row` counts entries from 1 (the header is not a row). */
export type SectionRow = {
  row: number;
  name: string;
  description: string;
  /** The row's `type` cell (empty when absent); the section's type is the file's base name. */
  type: string;
  kind: string;
  id: string;
  argsSchema: string;
  upstream: string;
  text: Record<string, string>;
  /** Way key (`way`, `way:rest`) → the raw cell (one JSON contract), only non-empty cells. */
  ways: Record<string, string>;
};

/** A problem with a section, naming where it is and what was expected. */
export type SectionProblem = { section: string; row?: number; column?: string; message: string };

export type ParsedSection = {
  type: string;
  file: string;
  format: SectionFormat;
  /** sha256 of the file's bytes: the section's version tag. */
  versionTag: string;
  columns: Column[];
  unknownHeaders: string[];
  rows: SectionRow[];
  problems: SectionProblem[];
};

/** A section file name → its type and format, or null when the file is not a section (`_` or `.` prefix, other extensions). */
export function sectionFileType(file: string): { type: string; format: SectionFormat } | null {
  const m = /^([^._][^/\\]*)\.(csv|json)$/i.exec(file);
  if (!m) return null;
  return { type: m[1]!.trim(), format: m[2]!.toLowerCase() as SectionFormat };
}

export function versionTagOf(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** Reads one section's bytes into rows. Never throws: problems are returned with the section, row and column named. */
export function parseSection(file: string, bytes: Buffer | string): ParsedSection {
  const kind = sectionFileType(file);
  if (!kind) throw new Error(`not a section file: ${file}`);
  const { type, format } = kind;
  const out: ParsedSection = {
    type,
    file,
    format,
    versionTag: versionTagOf(bytes),
    columns: [],
    unknownHeaders: [],
    rows: [],
    problems: [],
  };
  const text = (typeof bytes === 'string' ? bytes : bytes.toString('utf8')).replace(/^\uFEFF/, '');
  let headers: string[];
  let records: unknown[][];
  if (format === 'csv') {
    let table: string[][];
    try {
      table = parse(text, { bom: true, relax_column_count: false, skip_empty_lines: true }) as string[][];
    } catch (error) {
      out.problems.push({ section: type, message: `expected a CSV table, got unreadable CSV (${(error as Error).message})` });
      return out;
    }
    headers = table[0] ?? [];
    records = table.slice(1);
  } else {
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (error) {
      out.problems.push({ section: type, message: `expected a JSON array of objects, got invalid JSON (${(error as Error).message})` });
      return out;
    }
    if (!Array.isArray(data) || data.some((r) => r === null || typeof r !== 'object' || Array.isArray(r))) {
      out.problems.push({ section: type, message: 'expected a JSON array of objects keyed by column label' });
      return out;
    }
    const seen = new Set<string>();
    headers = [];
    for (const r of data as Record<string, unknown>[]) for (const k of Object.keys(r)) seen.add(k);
    headers = [...seen];
    records = (data as Record<string, unknown>[]).map((r) => headers.map((h) => r[h]));
  }
  out.columns = headers.map((h, i) => classifyHeader(h, i));
  const byKey = new Map<string, Column>();
  for (const c of out.columns) {
    if (c.role === 'unknown') {
      out.unknownHeaders.push(c.header);
      continue;
    }
    const other = byKey.get(c.key);
    if (other) {
      out.problems.push({ section: type, column: c.header, message: `expected one column per label, got "${other.header}" and "${c.header}" for ${c.key}` });
    } else byKey.set(c.key, c);
  }
  if (!byKey.has('name')) {
    out.problems.push({ section: type, column: 'name', message: 'expected a "name" column, got none' });
    return out;
  }
  const names = new Map<string, number>();
  records.forEach((record, index) => {
    const rowNo = index + 1;
    const get = (key: string) => {
      const c = byKey.get(key);
      return c ? cellText(record[c.position]).trim() : '';
    };
    const row: SectionRow = {
      row: rowNo,
      name: get('name'),
      description: get('description'),
      type: get('type'),
      kind: get('kind'),
      id: get('id'),
      argsSchema: get('args schema'),
      upstream: get('upstream'),
      text: {},
      ways: {},
    };
    for (const c of byKey.values()) {
      const v = cellText(record[c.position]).trim();
      if (!v) continue;
      if (c.role === 'text') row.text[c.key] = v;
      else if (c.role === 'way') row.ways[c.key] = v;
    }
    if (!row.name) {
      out.problems.push({ section: type, row: rowNo, column: byKey.get('name')!.header, message: 'expected a name, got an empty cell' });
      return;
    }
    if (row.type && row.type.toLowerCase() !== type.toLowerCase()) {
      out.problems.push({
        section: type,
        row: rowNo,
        column: byKey.get('type')!.header,
        message: `expected the section's type "${type}" or an empty cell, got ${JSON.stringify(row.type)}`,
      });
      return;
    }
    const first = names.get(row.name);
    if (first !== undefined) {
      out.problems.push({
        section: type,
        row: rowNo,
        column: byKey.get('name')!.header,
        message: `expected a name unique in its section, got ${JSON.stringify(row.name)} again (first at row ${first})`,
      });
      return;
    }
    names.set(row.name, rowNo);
    out.rows.push(row);
  });
  return out;
}

/** "section tool, row 3, column "way: rest": expected …" */
export function describeProblem(p: SectionProblem): string {
  const where = [`section ${p.section}`, p.row !== undefined ? `row ${p.row}` : null, p.column ? `column "${p.column}"` : null].filter(Boolean);
  return `${where.join(', ')}: ${p.message}`;
}
