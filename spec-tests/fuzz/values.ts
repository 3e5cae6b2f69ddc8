import fc from 'fast-check';

/**
 * Values for the fuzz suite: valid shapes, each field now and then replaced by something hostile
 * (another type, null, a huge or odd string, deep nesting), objects now and then given unknown
 * fields. Deep nesting travels as a marker string replaced in the body text, so fast-check never
 * prints or shrinks a structure thousands of levels deep.
 */

/** `"__DEEP_<n>__"` in a body becomes `n` nested arrays (see {@link expandDeep}). */
export const deep = (levels: number): string => `__DEEP_${levels}__`;

/** Replaces the deep-nesting markers in JSON text by the nesting they stand for. */
export const expandDeep = (text: string): string =>
  text.replace(/"__DEEP_(\d+)__"/g, (_, n: string) => `${'['.repeat(Number(n))}${']'.repeat(Number(n))}`);

/** A body of `n` bytes, as a marker the client expands (see {@link expandBytes}): a large file prints short. */
export const bytes = (n: number): string => `__BYTES_${n}__`;

/** A whole body `"__BYTES_<n>__"` becomes `n` bytes. */
export const expandBytes = (text: string): string =>
  text.replace(/^__BYTES_(\d+)__$/, (_, n: string) => 'z'.repeat(Number(n)));

const oddStrings = fc.constantFrom(
  '',
  ' ',
  '\u0000',
  '%',
  '%ZZ',
  '../../etc/passwd',
  '\n{"level":30,"audit":"cancel"}',
  '\ud800',
  '😀'.repeat(50),
  'null',
  '__proto__',
  'constructor',
  '1e999',
  'x'.repeat(5000),
  'x'.repeat(40_000),
);

/** Something of any JSON type: what a hostile caller puts where a field was expected. */
export const hostile: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(-1, 0, 2 ** 53, -(2 ** 63), 1e308, 0.5),
  fc.string(),
  fc.string({ unit: 'binary', maxLength: 30 }),
  oddStrings,
  fc.constantFrom(deep(63), deep(65), deep(200), deep(5000)),
  fc.array(fc.oneof(fc.constant(null), fc.integer(), fc.string()), { maxLength: 4 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.constant(null), fc.integer(), fc.string()), {
    maxKeys: 3,
  }),
);

/** A field: mostly `valid`, now and then hostile. */
export const field = <T>(valid: fc.Arbitrary<T>): fc.Arbitrary<unknown> =>
  fc.oneof({ weight: 5, arbitrary: valid }, { weight: 1, arbitrary: hostile });

/** An optional field: absent, valid, or hostile. */
export const optional = <T>(valid: fc.Arbitrary<T>): fc.Arbitrary<unknown> =>
  fc.oneof({ weight: 2, arbitrary: fc.constant(undefined) }, { weight: 4, arbitrary: field(valid) });

/** An object of fields (each possibly hostile), now and then with unknown fields, now and then not an object. */
export function shape(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<unknown> {
  const record = fc
    .tuple(fc.record(fields), fc.dictionary(fc.string({ maxLength: 10 }), hostile, { maxKeys: 2 }))
    .map(([known, extra]) => {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(known)) if (v !== undefined) out[k] = v;
      return { ...extra, ...out };
    });
  return fc.oneof({ weight: 8, arbitrary: record }, { weight: 1, arbitrary: hostile });
}

/** Percent-encodes text as a URL would; a lone surrogate (not UTF-8) as the bytes a careless client sends. */
const encode = (text: string): string => {
  try {
    return encodeURIComponent(text);
  } catch {
    return '%ED%A0%80';
  }
};

/** An id: one of the tasks that exist, or not, or odd. */
export const idOf = (known: readonly string[]): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...known) },
    { weight: 2, arbitrary: fc.uuid() },
    { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
    { weight: 1, arbitrary: oddStrings },
  );

/** A path segment: an id percent-encoded, or raw bad escapes and odd segments. */
export const segmentOf = (known: readonly string[]): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 6, arbitrary: idOf(known).map(encode) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        '%',
        '%Z',
        '%ZZ',
        '%E0%A4%A',
        '%C0%AF',
        '%00',
        '%2F',
        '%25',
        '..',
        '.',
        '',
        'a:b:c',
        ':cancel',
        'x%3Acancel',
        '%F0%9F%98%80',
        '%FF%FE',
      ),
    },
  );

/** A query string (with its `?`), or none. */
export const query = (params: Record<string, fc.Arbitrary<string>>): fc.Arbitrary<string> =>
  fc
    .tuple(
      fc.record(params, { requiredKeys: [] }),
      fc.constantFrom('', '', '', '&%ZZ=1', '&x=%E0%A4%A', '&historyLength=%', '&tenant=acme'),
    )
    .map(([p, raw]) => {
      const q = Object.entries(p)
        .map(([k, v]) => `${k}=${encode(v as string)}`)
        .join('&');
      const all = `${q}${raw}`;
      return all ? `?${all.replace(/^&/, '')}` : '';
    });

/** A small integer as text, or odd text where a number is expected. */
export const numberText = fc.oneof(
  fc.integer({ min: -2, max: 200 }).map(String),
  fc.constantFrom('abc', '1.5', '-0', '1e3', '', '99999999999999999999', 'NaN'),
);

/**
 * How a body's fields are made: `mutated` as {@link field}, {@link optional} and {@link shape} make
 * them (now and then out of bounds, of another type, or beside unknown fields), or `clean`, every
 * value within bounds and no unknown field: bodies that pass a strict schema and reach what is behind it.
 */
export interface Fields {
  /** A value: `valid`; mutated, now and then one of `invalid` (out of bounds) or hostile. */
  value(valid: fc.Arbitrary<unknown>, invalid?: fc.Arbitrary<unknown>): fc.Arbitrary<unknown>;
  /** An optional field: absent, or a value. */
  optional(valid: fc.Arbitrary<unknown>, invalid?: fc.Arbitrary<unknown>): fc.Arbitrary<unknown>;
  /** An object of fields (absent ones left out). */
  shape(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<unknown>;
}

const withoutAbsent = (o: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

export const clean: Fields = {
  value: (valid) => valid,
  optional: (valid) => fc.option(valid, { nil: undefined }),
  shape: (fields) => fc.record(fields).map(withoutAbsent),
};

const mutatedValue = (valid: fc.Arbitrary<unknown>, invalid?: fc.Arbitrary<unknown>) =>
  invalid === undefined
    ? field(valid)
    : fc.oneof(
        { weight: 5, arbitrary: valid },
        { weight: 2, arbitrary: invalid },
        { weight: 1, arbitrary: hostile },
      );

export const mutated: Fields = {
  value: mutatedValue,
  optional: (valid, invalid) =>
    fc.oneof(
      { weight: 2, arbitrary: fc.constant(undefined) },
      { weight: 4, arbitrary: mutatedValue(valid, invalid) },
    ),
  shape,
};
