// The client's wire types, written out so no server code is in its type graph, stay the server's.
import { expectTypeOf, it } from 'vitest';
import type { DispatchResult as ClientResult } from '../../src/client.ts';
import type { DispatchResult as ServerResult } from '../../src/dispatch/result.ts';

it("the client's DispatchResult is the server's, field by field", () => {
  type Plain<T> = { [K in keyof T]-?: K extends 'stream' | 'steps' ? unknown : T[K] };
  expectTypeOf<keyof ClientResult>().toEqualTypeOf<keyof ServerResult>();
  expectTypeOf<Plain<ClientResult>>().toEqualTypeOf<Plain<ServerResult>>();
  expectTypeOf<NonNullable<ClientResult['stream']>['state']>().toEqualTypeOf<NonNullable<ServerResult['stream']>['state']>();
});
