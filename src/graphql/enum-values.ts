// Enum values with descriptions, built from the const list that already names them (so it stays the one list).

/** Pothos enum values: every name of `names`, in its order, with its description. */
export function describedValues<const N extends string>(names: readonly N[], descriptions: Record<N, string>): Record<N, { description: string }> {
  return Object.fromEntries(names.map((name) => [name, { description: descriptions[name] }])) as Record<N, { description: string }>;
}
