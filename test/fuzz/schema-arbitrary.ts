import fc from 'fast-check';

/**
 * fast-check arbitraries from the JSON Schemas in Switchboard's OpenAPI document
 * (the keywords TypeBox emits there: type, properties, required,
 * additionalProperties, anyOf, enum, items, lengths, ranges, pattern, format).
 * `valid` follows the schema; `hostile` breaks it in the ways issue 13 found
 * holes with: wrong types, missing fields, prototype keys, depth and size
 * extremes, odd unicode.
 */
export type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
};

/** Strings that broke, or could break, something: control and surrogate characters, traversal, encodings, sizes. */
export const EDGE_STRINGS = [
  '',
  ' ',
  '\u0000',
  '\ud800',
  'ﬀ\u0301🔑',
  'ключ',
  '..',
  '../../etc/passwd',
  '%2e%2e%2f',
  '%00',
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  '__proto__',
  'constructor',
  'prototype',
  'x'.repeat(300),
  'y'.repeat(70_000),
];

export const edgeString = fc.constantFrom(...EDGE_STRINGS);
const anyString = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  edgeString,
);
const smallJson = fc.jsonValue({ maxDepth: 2 });

function typeOf(s: Schema): string | undefined {
  return Array.isArray(s.type) ? s.type[0] : s.type;
}

function stringOf(s: Schema): fc.Arbitrary<string> {
  if (s.pattern) {
    try {
      const re = new RegExp(s.pattern);
      const max = s.maxLength ?? 64;
      return fc.stringMatching(re).filter((v) => v.length >= (s.minLength ?? 0) && v.length <= max);
    } catch {
      /* a pattern JS cannot read: plain strings below */
    }
  }
  if (s.format === 'uri' || s.format === 'url') return fc.webUrl();
  if (s.format === 'date-time')
    return fc.date({ min: new Date(0), max: new Date(4102444800000), noInvalidDate: true }).map((d) => d.toISOString());
  if (s.format === 'email') return fc.emailAddress();
  return fc.string({ unit: 'grapheme', minLength: s.minLength ?? 0, maxLength: Math.min(s.maxLength ?? 24, 64) });
}

/** Values the schema accepts (mostly: patterns with lookarounds and formats are best effort). */
export function valid(s: Schema, depth = 0): fc.Arbitrary<unknown> {
  if (s.const !== undefined) return fc.constant(s.const);
  if (s.enum) return fc.constantFrom(...s.enum);
  const alts = s.anyOf ?? s.oneOf;
  if (alts?.length) return fc.oneof(...alts.map((a) => valid(a, depth)));
  switch (typeOf(s)) {
    case 'string':
      return stringOf(s);
    case 'integer':
      return fc.integer({ min: s.minimum ?? -1000, max: s.maximum ?? 1_000_000 });
    case 'number':
      return fc.double({ min: s.minimum ?? -1e6, max: s.maximum ?? 1e6, noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const min = s.minItems ?? 0;
      return fc.array(s.items && depth < 4 ? valid(s.items, depth + 1) : smallJson, {
        minLength: min,
        maxLength: Math.max(min, Math.min(s.maxItems ?? 3, 3)),
      });
    }
    case 'object': {
      if (depth >= 4) return fc.constant({});
      const props = s.properties ?? {};
      const required = new Set(s.required ?? []);
      const shape: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, v] of Object.entries(props)) shape[k] = valid(v, depth + 1);
      const base = fc.record(shape, { requiredKeys: Object.keys(props).filter((k) => required.has(k)) });
      if (
        s.additionalProperties === true ||
        (typeof s.additionalProperties === 'object' && Object.keys(props).length === 0)
      ) {
        const extra = fc.dictionary(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }), smallJson, {
          maxKeys: 4,
        });
        return fc.tuple(base, extra).map(([b, e]) => ({ ...e, ...b }));
      }
      return base;
    }
    default:
      return smallJson;
  }
}

/** A JSON text nested `depth` levels under one key. */
export function deepText(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

/** A JSON object text with `n` members. */
export function wideText(n: number): string {
  return `{${Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(',')}}`;
}

const wrongValue = fc.oneof(
  fc.constantFrom<unknown>(null, 0, -1, 1e308, true, [], {}, [[[]]], '', 'not-a-number'),
  anyString,
  smallJson,
);

/**
 * A request body text the schema should refuse (or that stresses the parser):
 * each is sent as application/json, so prototype keys and depth survive as text.
 */
export function hostileBody(s: Schema | undefined): fc.Arbitrary<string> {
  const props = Object.keys(s?.properties ?? {});
  const required = s?.required ?? [];
  const validBody = s ? valid(s) : smallJson;
  const mutations: Array<fc.Arbitrary<string>> = [
    // Not an object at all, or not JSON.
    fc.constantFrom(
      '[]',
      '"text"',
      '42',
      'null',
      'true',
      '{',
      '{"a":1,}',
      '{"a" 1}',
      '\u0000',
      '{"a":"\\ud800"}',
      '['.repeat(5000),
    ),
    // Prototype keys, at the top and inside free-form members.
    fc.constantFrom('__proto__', 'constructor', 'prototype').chain((key) =>
      validBody.map((b) => {
        const text = JSON.stringify(b ?? {});
        const inner = key === 'constructor' ? '{"prototype":{"polluted":true}}' : '{"polluted":true}';
        return text.startsWith('{') && text.length > 2 ? `{"${key}":${inner},${text.slice(1)}` : `{"${key}":${inner}}`;
      }),
    ),
    // Depth and size extremes, in a member (free-form ones are where they were stored).
    fc
      .tuple(fc.constantFrom(...(props.length ? props : ['metadata'])), fc.constantFrom(33, 40, 2000, 100_000))
      .map(([k, d]) => `{"${k}":${deepText(d)}}`),
    fc
      .tuple(fc.constantFrom(...(props.length ? props : ['metadata'])), fc.constantFrom(1001, 5000))
      .map(([k, n]) => `{"${k}":${wideText(n)}}`),
    // A wrong type in one field, or a required field missing.
    fc
      .tuple(validBody, fc.constantFrom(...(props.length ? props : ['x'])), wrongValue)
      .map(([b, k, v]) => JSON.stringify({ ...(b as object), [k]: v })),
    ...(required.length
      ? [
          fc
            .tuple(validBody, fc.constantFrom(...required))
            .map(([b, k]) =>
              JSON.stringify(Object.fromEntries(Object.entries(b as object).filter(([key]) => key !== k))),
            ),
        ]
      : []),
    // Odd unicode and huge strings in every string field.
    fc
      .tuple(validBody, edgeString)
      .map(([b, str]) =>
        JSON.stringify(
          Object.fromEntries(Object.entries((b ?? {}) as object).map(([k, v]) => [k, typeof v === 'string' ? str : v])),
        ),
      ),
  ];
  return fc.oneof(...mutations);
}

/** A path parameter: ordinary, hostile, or not valid percent-encoding (sent raw). */
export const pathParam: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.stringMatching(/^[a-z][a-z0-9-]{0,15}$/) },
  {
    weight: 2,
    arbitrary: fc.oneof(anyString, fc.constantFrom('__proto__', 'constructor', '..', '.')).map((v) => {
      try {
        return encodeURIComponent(v.slice(0, 200));
      } catch {
        return '%ED%A0%80'; // a lone surrogate: the invalid UTF-8 of one
      }
    }),
  },
  { weight: 1, arbitrary: fc.constantFrom('%E0%A4%A', '%', '%zz', 'x'.repeat(101), '%2F..%2F', 'a%00b') },
);

/** A query value for a parameter schema: valid, or anything at all. */
export function queryValue(s: Schema | undefined): fc.Arbitrary<string> {
  return fc.oneof(
    (s ? valid(s) : anyString).map((v) => (typeof v === 'string' ? v : JSON.stringify(v))),
    anyString,
    fc.constantFrom('-1', '1e309', 'NaN', '[]', '__proto__'),
  );
}
