// Maps section rows (type → records of header label → cell text) to the rows the
// resolver indexes. Pure; the Directory's fixture and section files share this shape.
import { normaliseLabel, TextLabels } from '../directory/labels.ts';
import type { ResolverRow } from './types.ts';

/** A section row as read: header label → cell text. */
export type SectionRecord = Readonly<Record<string, string>>;

export type SectionResolverRow = ResolverRow & { id: string | null; section: string };

const textLabels: ReadonlySet<string> = new Set(TextLabels);

/** Name, description, type (the cell, else the section), kind, id and every free-text column; way, args-schema and upstream cells are not searched. */
export function resolverRowsFromSections(sections: Readonly<Record<string, readonly SectionRecord[]>>): SectionResolverRow[] {
  const out: SectionResolverRow[] = [];
  for (const [section, records] of Object.entries(sections)) {
    for (const record of records) {
      const cells = new Map<string, string>();
      for (const [label, value] of Object.entries(record)) cells.set(normaliseLabel(label), value);
      const name = cells.get('name')?.trim();
      if (!name) continue;
      const text: string[] = [];
      for (const [label, value] of cells) if (value && textLabels.has(label)) text.push(value);
      out.push({
        name,
        type: cells.get('type')?.trim() || section,
        kind: cells.get('kind')?.trim() || null,
        id: cells.get('id')?.trim() || null,
        description: cells.get('description') || null,
        text,
        section,
      });
    }
  }
  return out;
}
