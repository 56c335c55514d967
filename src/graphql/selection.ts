// Looking ahead from a resolver: the fields of its own selection set with a given name, through
// fragments, so a root field can read in one statement what a field below it will ask for.
import { Kind, type FieldNode, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';

/** Every field named `name` directly under the field being resolved (aliases included). */
export function selectedFields(info: GraphQLResolveInfo, name: string): FieldNode[] {
  const out: FieldNode[] = [];
  const within = (set: SelectionSetNode | undefined) => {
    for (const s of set?.selections ?? []) {
      if (s.kind === Kind.FIELD) {
        if (s.name.value === name) out.push(s);
      } else within(s.kind === Kind.INLINE_FRAGMENT ? s.selectionSet : info.fragments[s.name.value]?.selectionSet);
    }
  };
  for (const node of info.fieldNodes) within(node.selectionSet);
  return out;
}
