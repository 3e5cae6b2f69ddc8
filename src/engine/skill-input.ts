import { z } from 'zod';
import { kindOf } from '../words/zod-words.js';
import { uncheckable } from './json-schema-check.js';
import type { AnySkill, JsonSchema } from './skill.js';

/**
 * A skill's input in the two forms the server uses, whichever the author wrote: a zod schema to
 * validate with (the same issues and words for both), and JSON Schema to show callers.
 */
export interface SkillInput {
  readonly schema: z.ZodType;
  /** The author's JSON Schema (without `$schema`), or zod's rendering of a zod schema (built once, on first use). */
  jsonSchema(): Record<string, unknown>;
}

/** zod 4 schemas carry `_zod`. Not `instanceof`: a schema made by the author's own copy of zod would fail it. */
const isZod = <I>(input: z.ZodType<I> | JsonSchema): input is z.ZodType<I> =>
  typeof input === 'object' && input !== null && '_zod' in input;

/**
 * The skill's input as {@link SkillInput}. A JSON Schema the server cannot check as written throws
 * an Error naming the skill and the place in the schema, for the server to refuse to start with.
 */
export function skillInput(skill: AnySkill): SkillInput {
  const { input } = skill;
  if (isZod(input)) {
    let shown: Record<string, unknown> | undefined;
    return { schema: input, jsonSchema: () => (shown ??= rendered(input)) };
  }
  const schema = converted(skill.id, input);
  // `true` and `false` as the object schemas that mean the same, so every shown schema is an object.
  const shown = typeof input === 'boolean' ? (input ? {} : { not: {} }) : withoutDialect(input);
  return { schema, jsonSchema: () => shown };
}

/** zod's JSON Schema of a zod input (input side: strict objects say additionalProperties: false). */
function rendered(input: z.ZodType): Record<string, unknown> {
  return withoutDialect(z.toJSONSchema(input, { io: 'input', unrepresentable: 'any' }));
}

/** `$schema` says which draft the schema is written in, which is no news to a caller. */
function withoutDialect(schema: { readonly [keyword: string]: unknown }): Record<string, unknown> {
  const { $schema: _, ...rest } = schema;
  return rest;
}

/**
 * A JSON Schema input as zod, by zod's own `z.fromJSONSchema`: callers get the issues a zod schema
 * gives, so the same words. A `default` is filled in as zod's `.default()` does: for a missing key,
 * the value as written (neither checked against the schema nor filled in further). Unless the
 * schema says `"additionalProperties": false`, keys it does not name are kept, as JSON Schema
 * allows them (zod's `z.object` would drop them). What zod cannot check is refused before
 * (engine/json-schema-check.ts).
 */
function converted(id: string, input: JsonSchema): z.ZodType {
  const refuse = (what: string) => new Error(`skill "${id}": its input JSON Schema ${what}`);
  if (typeof input === 'boolean') return z.fromJSONSchema(input);
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw refuse(`must be an object or true/false (or the input a zod schema), not ${kindOf(input)}`);
  }
  const problem = uncheckable(input);
  if (problem) throw refuse(`cannot be checked as written, at ${problem}`);
  try {
    // `#/definitions/...` refs resolve only in draft-07 mode, which zod picks from an exact `$schema`
    // alone; a schema that keeps its definitions there is read as draft-07 without one.
    const draft07 = 'definitions' in input && !('$defs' in input);
    return z.fromJSONSchema(input, draft07 ? { defaultTarget: 'draft-7' } : undefined);
  } catch (err) {
    throw refuse(`cannot be checked as written: ${(err as Error).message}`);
  }
}
