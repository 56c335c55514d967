// Preloaded by the npm scripts (`node --import ./src/compile-cache.js …`) and called by the bin: Node
// keeps the JavaScript it strips from each .ts file, compiled, in a cache folder (NODE_COMPILE_CACHE,
// else the system's temporary folder), so a later start skips the type stripper (17 MB of RSS for
// as long as the process lives) and the compile. A changed file is stripped again.
import module from 'node:module';

module.enableCompileCache?.();
