// The layering of src/ as a checked rule (docs/ARCHITECTURE.md, "Layers"): data flows one way,
// doors → graphql → cores → db → the bottom floor. `npm run lint` runs it; no exceptions are listed.
const floor = '^src/(context|secrets)/|^src/(errors|limits|logger|validation)\\.ts$';
const cores = '^src/(directory|resolver|ledger|capture|dispatch|model|auth|live)/';
const doors = '^src/(doors|http|mcp|cli)/|^src/(app|server|services)\\.ts$';

// The cores, lowest first: each may import those before it, never one after it.
const coreOrder = ['db', 'ledger', 'auth', 'capture', 'directory', 'resolver', 'dispatch', 'model', 'live'];
const upward = coreOrder.slice(0, -1).map((core, i) => ({
  name: `${core}-imports-no-core-above-it`,
  severity: 'error',
  comment: `Cores in order: ${coreOrder.join(' < ')}.`,
  from: { path: `^src/${core}/` },
  to: { path: `^src/(${coreOrder.slice(i + 1).join('|')})/` },
}));

module.exports = {
  forbidden: [
    ...upward,
    { name: 'no-cycles', severity: 'error', comment: 'An import cycle hides which module is below which.', from: { path: '^src/' }, to: { circular: true, dependencyTypesNot: ['type-only'] } },
    { name: 'floor-imports-only-floor', severity: 'error', comment: 'The bottom floor (request context, secrets, errors, limits, logger) knows nothing above it.', from: { path: floor }, to: { path: '^src/', pathNot: `${floor}|^src/config\\.ts$` } },
    { name: 'db-below-cores', severity: 'error', comment: 'The database layer knows no core, adapter or door.', from: { path: '^src/db/' }, to: { path: `${cores}|^src/graphql/|${doors}` } },
    { name: 'cores-never-import-doors', severity: 'error', comment: 'A core does not know its transport.', from: { path: cores }, to: { path: doors, dependencyTypesNot: ['type-only'] } },
    { name: 'cores-reach-graphql-only-from-schema-files', severity: 'error', comment: "Only a domain's schema.ts (Pothos co-location) uses the GraphQL layer.", from: { path: cores, pathNot: '(^|/)[a-z-]*schema\\.ts$' }, to: { path: '^src/graphql/', dependencyTypesNot: ['type-only'] } },
    { name: 'resolver-is-pure', severity: 'error', comment: 'Lexical ranking knows no database and no GraphQL.', from: { path: '^src/resolver/', pathNot: '(schema|directory-source)\\.ts$' }, to: { path: '^src/(db|graphql)/|@prisma|^node_modules/(graphql|@pothos)' } },
    { name: 'graphql-never-imports-doors', severity: 'error', from: { path: '^src/graphql/' }, to: { path: doors, dependencyTypesNot: ['type-only'] } },
    { name: 'console-is-browser-code', severity: 'error', comment: 'The console reaches the server only over GraphQL: it imports nothing of src/.', from: { path: '^console/' }, to: { path: '^(src|test|bench)/' } },
    { name: 'server-never-imports-console', severity: 'error', comment: 'The server serves console/dist as files; it imports no browser code.', from: { path: '^src/' }, to: { path: '^console/' } },
    { name: 'no-test-code-in-src', severity: 'error', from: { path: '^src/' }, to: { path: '^(test|bench)/' } },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/generated/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'], extensions: ['.ts', '.tsx', '.js', '.mjs', '.cjs'] },
  },
};
