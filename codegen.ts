// Typed documents (client preset) for the operations the tests use, from the committed schema.
import type { CodegenConfig } from '@graphql-codegen/cli';

const config: CodegenConfig = {
  schema: 'schema.graphql',
  documents: ['test/**/*.ts', '!test/gql/**'],
  ignoreNoDocuments: false,
  generates: {
    'test/gql/': {
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: {
        useTypeImports: true,
        enumsAsTypes: true,
        scalars: { BigInt: 'string', Decimal: 'string', DateTime: 'string', JSON: 'unknown' },
      },
    },
  },
};

export default config;
