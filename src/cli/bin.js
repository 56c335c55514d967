#!/usr/bin/env -S node --max-semi-space-size=32
// The `dirledger` command: runs the TypeScript CLI through tsx.
import { register } from 'tsx/esm/api';

register();
await import('./main.ts');
