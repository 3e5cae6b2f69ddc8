import { z } from 'zod';
import { didYouMean } from './did-you-mean.js';

const KIND: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  bigint: 'an integer',
  boolean: 'true or false',
  object: 'an object',
  record: 'an object',
  array: 'an array',
};

/** What a caller would call the type of a JSON value. */
export const kindOf = (v: unknown): string =>
  v === null ? 'null' : Array.isArray(v) ? 'an array' : (KIND[typeof v] ?? typeof v);

/** What a caller would call a type zod expected. */
export const expectedKind = (expected: string): string => KIND[expected] ?? expected;

/**
 * zod's default wording of a wrong type names JS types ("Invalid input: expected string, received
 * undefined"), which callers of every face read (skill inputs, job bodies, params). Said instead as
 * a person would: "is required", "must be a string, not a number". Other issues keep zod's words.
 */
export const zodWords = (issue: z.core.$ZodRawIssue): string | undefined => {
  if (issue.code === 'unrecognized_keys') return unknownKeys(issue.keys, issue.inst);
  if (issue.code !== 'invalid_type') return undefined;
  if (issue.input === undefined) return 'is required';
  return `must be ${expectedKind(issue.expected)}, not ${kindOf(issue.input)}`;
};

/**
 * {@link zodWords} for every parse of this process's zod, installed once at start (zod's config is
 * global). A skill's input made with another copy of zod (the user's own) gets them per parse
 * (engine/registry.ts).
 */
export function installZodWords(): void {
  z.config({ customError: zodWords });
}

/** "unknown key "row" (did you mean "rows"?); known keys: rows, format": a typo must not pass unseen. */
function unknownKeys(keys: readonly string[], schema: unknown): string {
  const shape = (schema as { _zod?: { def?: { shape?: Record<string, unknown> } } } | undefined)?._zod?.def
    ?.shape;
  const known = Object.keys(shape ?? {});
  const named = keys.map((k) => `"${k}"${didYouMean(k, known, (guess) => `"${guess}"`)}`).join(', ');
  const which = keys.length === 1 ? 'unknown key' : 'unknown keys';
  return known.length > 0 ? `${which} ${named}; known keys: ${known.join(', ')}` : `${which} ${named}`;
}
