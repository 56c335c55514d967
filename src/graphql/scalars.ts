// Custom scalars. BigInt and Decimal travel as strings so no digit is lost.
import { GraphQLError, Kind } from 'graphql';
import { DateTimeResolver, JSONResolver } from 'graphql-scalars';
import { builder } from './builder.ts';

builder.addScalarType('DateTime', DateTimeResolver);
builder.addScalarType('JSON', JSONResolver);

builder.scalarType('BigInt', {
  description: 'A whole number of any size, sent as a decimal string.',
  serialize: (value) => String(value),
  parseValue: (value) => {
    if ((typeof value === 'string' && /^-?\d{1,20}$/.test(value)) || (typeof value === 'number' && Number.isSafeInteger(value))) {
      return BigInt(value);
    }
    throw new GraphQLError(`BigInt: expected a whole number as a string of digits, got ${JSON.stringify(value)}`, {
      extensions: { code: 'BAD_INPUT' },
    });
  },
  parseLiteral: (ast) => {
    if (ast.kind === Kind.INT || (ast.kind === Kind.STRING && /^-?\d{1,20}$/.test(ast.value))) return BigInt(ast.value);
    throw new GraphQLError('BigInt: expected a whole number', { extensions: { code: 'BAD_INPUT' } });
  },
});

builder.scalarType('Decimal', {
  description: 'An exact decimal number (for money: US dollars), sent as a string.',
  // In plain notation, as the input accepts it: a Decimal's own string turns exponential below 1e-7 (`1e-10`).
  serialize: (value) => (typeof value === 'object' && value !== null && 'toFixed' in value ? value.toFixed() : String(value)),
  parseValue: (value) => {
    const text = typeof value === 'number' ? String(value) : value;
    if (typeof text === 'string' && /^-?\d+(\.\d+)?$/.test(text)) return text;
    throw new GraphQLError(`Decimal: expected a decimal number as a string, got ${JSON.stringify(value)}`, {
      extensions: { code: 'BAD_INPUT' },
    });
  },
  parseLiteral: (ast) => {
    if (ast.kind === Kind.STRING || ast.kind === Kind.INT || ast.kind === Kind.FLOAT) return String(ast.value);
    throw new GraphQLError('Decimal: expected a decimal number', { extensions: { code: 'BAD_INPUT' } });
  },
});
