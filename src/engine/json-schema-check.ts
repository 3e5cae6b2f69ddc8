import { z } from 'zod';

/*
 * What zod 4's `z.fromJSONSchema` (engine/skill-input.ts) cannot check in a skill's input schema,
 * found before it converts it: it throws on some keywords without saying where, and silently lets
 * others pass, which would let through input the author meant to refuse. Each is refused here, at
 * its place in the schema. Supported otherwise: type (and lists of types), enum, const, properties,
 * required, additionalProperties, patternProperties, propertyNames, items, prefixItems, contains,
 * uniqueItems, the min/max counts and bounds, multipleOf, pattern, anyOf, oneOf, allOf, default,
 * and local `$ref`s (`#/$defs/...`, or `#/definitions/...` in draft-07; recursion too). Left
 * unchecked, as JSON Schema allows: `format` values zod does not know (it knows email, uri, uuid,
 * date-time, date, time, duration, ipv4, ipv6, hostname and a few more) and annotations (title,
 * examples, readOnly, content*...).
 */

/** zod throws on these (without saying where) or passes them by (dependencies, $dynamicRef, $recursiveRef). */
const UNSUPPORTED = [
  'if',
  'then',
  'else',
  'dependentRequired',
  'dependentSchemas',
  'dependencies',
  'unevaluatedItems',
  'unevaluatedProperties',
  '$dynamicRef',
  '$recursiveRef',
];

/** Keywords zod reads only under a `type` (and not beside `$ref`, `enum` or `const`): which type. */
const UNDER_TYPE = new Map(
  Object.entries({
    object: [
      'properties',
      'required',
      'additionalProperties',
      'patternProperties',
      'propertyNames',
      'minProperties',
      'maxProperties',
    ],
    array: [
      'items',
      'prefixItems',
      'additionalItems',
      'contains',
      'minContains',
      'maxContains',
      'minItems',
      'maxItems',
      'uniqueItems',
    ],
    string: ['minLength', 'maxLength', 'pattern', 'format'],
    number: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
  }).flatMap(([type, keys]) => keys.map((k) => [k, type] as const)),
);

const isRegExp = (source: string) => {
  try {
    new RegExp(source);
    return true;
  } catch {
    return false;
  }
};

const TypeName = z.enum(['object', 'array', 'string', 'number', 'integer', 'boolean', 'null']);
const Count = z.int().min(0);
const Pattern = z.string().refine(isRegExp, 'is not a valid regular expression');
// A boolean is draft-04's way: it makes `minimum`/`maximum` exclusive.
const Bound = z.union([z.number(), z.boolean()], { error: 'must be a number' });

/** A subschema: an object, or `true`/`false` (which has nothing to check). */
const Schema: z.ZodType = z.lazy(() => z.preprocess((v) => (typeof v === 'boolean' ? {} : v), Keywords));
const Schemas = z.record(z.string(), Schema);
const SchemaList = z.array(Schema).min(1);

/** The keywords the conversion reads, each with the kind of value it takes. */
const Keywords = z
  .looseObject(
    {
      type: z
        .union([TypeName, z.array(TypeName).min(1)], {
          error: `must be one of ${TypeName.options.join(', ')}, or a list of them`,
        })
        .optional(),
      enum: z.array(z.unknown()).optional(),
      $ref: z.string().optional(),
      $defs: Schemas.optional(),
      definitions: Schemas.optional(),
      anyOf: SchemaList.optional(),
      oneOf: SchemaList.optional(),
      allOf: SchemaList.optional(),
      // { not: {} } is how zod writes "nothing passes"; any other `not` it cannot check.
      not: z
        .strictObject({}, { error: () => 'is supported only as {} (nothing passes); say it another way' })
        .optional(),
      properties: Schemas.optional(),
      patternProperties: z
        .record(Pattern, Schema, {
          error: (i) => (i.code === 'invalid_key' ? 'is not a valid regular expression' : undefined),
        })
        .optional(),
      required: z.array(z.string()).optional(),
      additionalProperties: Schema.optional(),
      propertyNames: Schema.optional(),
      minProperties: Count.optional(),
      maxProperties: Count.optional(),
      items: z
        .union([Schema, z.array(Schema)], { error: 'must be a schema, or a list of schemas' })
        .optional(),
      prefixItems: z.array(Schema).optional(),
      additionalItems: Schema.optional(),
      contains: Schema.optional(),
      minItems: Count.optional(),
      maxItems: Count.optional(),
      minContains: Count.optional(),
      maxContains: Count.optional(),
      uniqueItems: z.boolean().optional(),
      minLength: Count.optional(),
      maxLength: Count.optional(),
      pattern: Pattern.optional(),
      format: z.string().optional(),
      minimum: z.number().optional(),
      maximum: z.number().optional(),
      exclusiveMinimum: Bound.optional(),
      exclusiveMaximum: Bound.optional(),
      multipleOf: z.number().positive().optional(),
    },
    {
      error: (issue) =>
        issue.code === 'invalid_type' ? 'must be a schema: an object, or true/false' : undefined,
    },
  )
  .superRefine((node, ctx) => {
    const refuse = (path: (string | number)[], message: string) =>
      ctx.addIssue({ code: 'custom', path, message });
    for (const k of UNSUPPORTED) {
      if (k in node) refuse([k], `is not supported; say it another way, or write the input as a zod schema`);
    }
    const beside = ['$ref', 'enum', 'const'].find((k) => k in node);
    for (const [k, type] of UNDER_TYPE) {
      if (!(k in node)) continue;
      if (beside) refuse([k], `is not checked beside "${beside}"; put both in an "allOf"`);
      else if (node.type === undefined) refuse([k], `is checked only under "type": "${type}"; add it`);
    }
    // zod makes only the keys of `properties` required: any other name in `required` would pass unseen.
    const types = [node.type ?? []].flat();
    if (beside || !types.includes('object')) return;
    for (const [i, name] of (node.required ?? []).entries()) {
      if (node.properties && Object.hasOwn(node.properties, name)) continue;
      refuse(['required', i], `names "${name}", which "properties" does not define; add "${name}": {} there`);
    }
  });

/** A JSON pointer (RFC 6901) to a place in the schema, as JSON Schema tools name places. */
const pointer = (path: readonly PropertyKey[]) =>
  ['#', ...path.map((p) => String(p).replaceAll('~', '~0').replaceAll('/', '~1'))].join('/');

/**
 * The first thing in a JSON Schema (an object) that `z.fromJSONSchema` cannot check as written,
 * said as "where: what" (`#/properties/n/minimum: must be a number, not a string`); undefined when
 * there is none.
 */
export function uncheckable(schema: object): string | undefined {
  const parsed = Keywords.safeParse(schema);
  const issue = parsed.error?.issues[0];
  return issue && `${pointer(issue.path)}: ${issue.message}`;
}
