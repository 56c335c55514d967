#!/usr/bin/env node
// The `dirledger` command: runs the TypeScript CLI through tsx.
import { register } from 'tsx/esm/api';

register();
await import('./main.ts');
