// Typed documents (client preset) from the committed schema: the operations the tests use, and the
// reviewer console's (as printed strings, so the browser bundle carries no GraphQL parser or printer).
import type { CodegenConfig } from '@graphql-codegen/cli';

const config = {
  useTypeImports: true,
  enumsAsTypes: true,
  scalars: { BigInt: 'string', Decimal: 'string', DateTime: 'string', JSON: 'unknown' },
};

const codegen: CodegenConfig = {
  schema: 'schema.graphql',
  ignoreNoDocuments: false,
  generates: {
    'test/gql/': {
      documents: ['test/**/*.ts', '!test/gql/**'],
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config,
    },
    'console/gql/': {
      documents: ['console/src/**/*.{ts,tsx}'],
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: { ...config, documentMode: 'string' },
    },
  },
};

export default codegen;
