// Runs before each test file of the `shared` project (vitest.config.ts), whose files share a worker
// process one after another: a file must leave that process as it found it. Every app a file starts
// installs the outbound capture as undici's global dispatcher until the last app stops, so a file
// that ends with another global dispatcher than it began with left an app running for the next file.
import { getGlobalDispatcher } from 'undici';
import { afterAll, beforeAll } from 'vitest';

let atStart: unknown;

beforeAll(() => {
  atStart = getGlobalDispatcher();
});

afterAll(() => {
  if (getGlobalDispatcher() !== atStart) {
    throw new Error('This file left an app running (the outbound capture is still the global dispatcher): stop every app it starts.');
  }
});
