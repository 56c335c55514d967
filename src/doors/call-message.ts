// The canonical call as the streaming doors (SSE, raw WebSocket) take it: {"tool": NAME, "args": {...}}.
import { z } from 'zod';
import { ContractForms } from '../directory/forms.ts';

export const CallMessage = z.strictObject({
  tool: z.string().min(1),
  args: z.record(z.string(), z.unknown()).optional(),
  dryRun: z.boolean().optional(),
  form: z.enum(ContractForms).optional(),
});
export type CallMessage = z.output<typeof CallMessage>;
