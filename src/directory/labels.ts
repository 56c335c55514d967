// Column labels of a section: matched by what the header says, never by where it stands.

/** Columns every row may carry, by their normalised label. */
export const CoreLabels = ['name', 'description', 'type', 'kind', 'id', 'args schema', 'upstream'] as const;
export type CoreLabel = (typeof CoreLabels)[number];

/** Free-text columns kept with the row and searched, never interpreted. */
export const TextLabels = ['body', 'path', 'value', 'url', 'tags', 'secret', 'owner', 'notes', 'status', 'email', 'title'] as const;
export type TextLabel = (typeof TextLabels)[number];

/** A `model` row's columns (src/model/catalog.ts reads them; kept with the row like text). Prices are USD per million tokens. */
export const ModelLabels = [
  'provider',
  'upstream model',
  'context window',
  'max output',
  'input price',
  'output price',
  'cached price',
  'cache write price',
  'cache write 1h price',
  'price date',
] as const;

export type ColumnRole = 'core' | 'text' | 'way' | 'unknown';

/** One header of a section, classified. `key` is the canonical label (for a way: `way` or `way:<name>`). */
export type Column = { header: string; position: number; role: ColumnRole; key: string };

/** Lower-cased, trimmed; spaces, underscores and hyphens are one separator. */
export function normaliseLabel(header: string): string {
  return header
    .normalize('NFKC')
    .trim()
    .toLowerCase()
    .replace(/[\s_-]+/g, ' ')
    .replace(/\s*:\s*/g, ': ')
    .trim();
}

const wayPattern = /^way(?:(?::\s*|\s+)(.*))?$/;

/** Classifies one header. A header nobody recognises is `unknown` and is never guessed at. */
export function classifyHeader(header: string, position: number): Column {
  const label = normaliseLabel(header);
  if ((CoreLabels as readonly string[]).includes(label)) return { header, position, role: 'core', key: label };
  if ((TextLabels as readonly string[]).includes(label) || (ModelLabels as readonly string[]).includes(label))
    return { header, position, role: 'text', key: label };
  const way = wayPattern.exec(label);
  if (way) {
    const name = (way[1] ?? '').replace(/:\s*/g, ' ').trim();
    return { header, position, role: 'way', key: name ? `way:${name}` : 'way' };
  }
  return { header, position, role: 'unknown', key: label };
}

/** The header a writer uses for a way key (`way` or `way: rest`). */
export function wayHeader(key: string): string {
  return key === 'way' ? 'way' : `way: ${key.slice('way:'.length)}`;
}
