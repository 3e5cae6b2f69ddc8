import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { SkillRegistry } from '../../src/engine/registry.js';
import { type AnySkill, defineSkill, type JsonSchema } from '../../src/engine/skill.js';
import { toolsFor } from '../../src/faces/mcp/tools.js';
import { installZodWords } from '../../src/words/zod-words.js';

// As the server does at start: the words callers read.
installZodWords();

const skill = (input: AnySkill['input'], id = 'greet'): AnySkill =>
  defineSkill({
    id,
    description: 'test skill',
    input,
    pollIntervalMs: 1000,
    ttlMs: 3_600_000,
    onInterrupt: 'rerun',
    async run() {
      return undefined;
    },
  });

const GREET: JsonSchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, description: 'Who to greet' },
    times: { type: 'integer', minimum: 1, maximum: 10, default: 1 },
    tone: { enum: ['warm', 'formal'], default: 'warm' },
    tags: { type: 'array', items: { type: 'string' } },
    options: {
      type: 'object',
      properties: { loud: { type: 'boolean' } },
      required: ['loud'],
      additionalProperties: false,
    },
  },
  required: ['name'],
  additionalProperties: false,
};

/** What an author would write in zod for GREET. */
const GREET_ZOD = z.strictObject({
  name: z.string().min(1),
  times: z.int().min(1).max(10).default(1),
  tone: z.enum(['warm', 'formal']).default('warm'),
  tags: z.array(z.string()).optional(),
  options: z.strictObject({ loud: z.boolean() }).optional(),
});

/** The refusal a caller gets for `raw`, or what it parses to. */
function outcome(registry: SkillRegistry, raw: unknown): unknown {
  try {
    return registry.parseInput(registry.use('greet'), raw);
  } catch (err) {
    return (err as Error).message;
  }
}

describe('a skill whose input is a JSON Schema', () => {
  const fromJson = new SkillRegistry([skill(GREET)]);
  const fromZod = new SkillRegistry([skill(GREET_ZOD)]);

  it.each([
    ['a required field missing', {}, 'Invalid input.name for skill "greet": is required'],
    ['a wrong type', { name: 7 }, 'Invalid input.name for skill "greet": must be a string, not a number'],
    [
      'a value not in the enum',
      { name: 'Ada', tone: 'rude' },
      'Invalid input.tone for skill "greet": Invalid option: expected one of "warm"|"formal"',
    ],
    [
      'an unknown key under additionalProperties: false',
      { name: 'Ada', nmae: 'Ada' },
      'Invalid input for skill "greet": unknown key "nmae" (did you mean "name"?); known keys: name, times, tone, tags, options',
    ],
    [
      'a number below minimum',
      { name: 'Ada', times: 0 },
      'Invalid input.times for skill "greet": Too small: expected number to be >=1',
    ],
    [
      'a fraction for an integer',
      { name: 'Ada', times: 1.5 },
      'Invalid input.times for skill "greet": must be an integer, not a number',
    ],
    [
      'a string under minLength',
      { name: '' },
      'Invalid input.name for skill "greet": Too small: expected string to have >=1 characters',
    ],
    [
      'a nested field missing',
      { name: 'Ada', options: {} },
      'Invalid input.options.loud for skill "greet": is required',
    ],
    [
      'a wrong array item',
      { name: 'Ada', tags: ['a', 2] },
      'Invalid input.tags.1 for skill "greet": must be a string, not a number',
    ],
    ['no object at all', 'Ada', 'Invalid input for skill "greet": must be an object, not a string'],
  ])('refuses %s in the words and with the field name a zod schema gives', (_, raw, words) => {
    expect(outcome(fromJson, raw)).toBe(words);
    expect(outcome(fromZod, raw)).toBe(words);
  });

  it('fills in the defaults as zod does', () => {
    const filled = { name: 'Ada', times: 1, tone: 'warm' };
    expect(outcome(fromJson, { name: 'Ada' })).toEqual(filled);
    expect(outcome(fromZod, { name: 'Ada' })).toEqual(filled);
  });

  it('keeps keys the schema does not name unless additionalProperties is false, as JSON Schema does', () => {
    const open = new SkillRegistry([skill({ type: 'object', properties: { a: { type: 'string' } } })]);
    expect(outcome(open, { a: 'x', b: 2 })).toEqual({ a: 'x', b: 2 });
  });

  it('takes true as any input', () => {
    expect(outcome(new SkillRegistry([skill(true)]), 'anything')).toBe('anything');
  });

  it('resolves $defs, and draft-07 definitions with or without its $schema', () => {
    const defs = {
      type: 'object',
      properties: { n: { $ref: '#/$defs/N' } },
      $defs: { N: { type: 'number' } },
    };
    const draft07 = {
      type: 'object',
      properties: { n: { $ref: '#/definitions/N' } },
      definitions: { N: { type: 'number' } },
    };
    for (const schema of [
      defs,
      draft07,
      { ...draft07, $schema: 'http://json-schema.org/draft-07/schema#' },
    ]) {
      expect(outcome(new SkillRegistry([skill(schema)]), { n: 'x' })).toBe(
        'Invalid input.n for skill "greet": must be a number, not a string',
      );
    }
  });

  it('follows a recursive $ref down the input', () => {
    const tree = {
      $ref: '#/$defs/Node',
      $defs: {
        Node: {
          type: 'object',
          properties: {
            name: { type: 'string' },
            children: { type: 'array', items: { $ref: '#/$defs/Node' } },
          },
          required: ['name'],
        },
      },
    };
    const registry = new SkillRegistry([skill(tree)]);
    expect(outcome(registry, { name: 'a', children: [{ name: 'b' }] })).toEqual({
      name: 'a',
      children: [{ name: 'b' }],
    });
    expect(outcome(registry, { name: 'a', children: [{ name: 'b', children: [{}] }] })).toBe(
      'Invalid input.children.0.children.0.name for skill "greet": is required',
    );
  });

  it('types ctx.input as unknown unless the skill names its type', () => {
    const common = { description: 'd', pollIntervalMs: 1000, ttlMs: 1000, onInterrupt: 'rerun' } as const;
    defineSkill({
      ...common,
      id: 'plain',
      input: GREET,
      async run(ctx) {
        expectTypeOf(ctx.input).toBeUnknown();
        return undefined;
      },
    });
    defineSkill<{ name: string }>({
      ...common,
      id: 'named',
      input: GREET,
      async run(ctx) {
        expectTypeOf(ctx.input).toEqualTypeOf<{ name: string }>();
        return undefined;
      },
    });
    defineSkill({
      ...common,
      id: 'zod',
      input: z.object({ name: z.string() }),
      async run(ctx) {
        expectTypeOf(ctx.input).toEqualTypeOf<{ name: string }>();
        return undefined;
      },
    });
  });
});

describe('a JSON Schema the server cannot check as written', () => {
  it.each([
    [{ type: 'object', if: {}, else: {} }, '#/if: is not supported'],
    [
      { type: 'object', properties: { a: { not: { type: 'string' } } } },
      '#/properties/a/not: is supported only as {}',
    ],
    [
      { type: 'object', properties: { a: { minimum: 1 } } },
      '#/properties/a/minimum: is checked only under "type": "number"',
    ],
    [{ properties: { a: { type: 'string' } } }, '#/properties: is checked only under "type": "object"'],
    [
      { type: 'object', properties: { a: { $ref: '#/$defs/A', minimum: 1 } } },
      '#/properties/a/minimum: is not checked beside "$ref"',
    ],
    [{ type: 'object', required: ['a'] }, '#/required/0: names "a", which "properties" does not define'],
    [{ type: 'object', required: 'a' }, '#/required: must be an array, not a string'],
    [
      { type: 'object', properties: { 'a/b': { type: 'number', minimum: '1' } } },
      '#/properties/a~1b/minimum: must be a number, not a string',
    ],
    [{ type: 'object', properties: { a: 3 } }, '#/properties/a: must be a schema: an object, or true/false'],
    [{ type: 'strng' }, '#/type: must be one of object, array'],
    [
      { type: 'object', patternProperties: { '(': {} } },
      '#/patternProperties/(: is not a valid regular expression',
    ],
    [{ type: 'string', pattern: '(' }, '#/pattern: is not a valid regular expression'],
    [{ type: 'object', properties: { a: { $ref: '#/$defs/A' } } }, 'Reference not found: #/$defs/A'],
    [{ $ref: 'https://example.com/a.json' }, 'External $ref is not supported'],
  ])('refuses %j when the registry is built, naming the skill and the place', (schema, what) => {
    expect(() => new SkillRegistry([skill({ type: 'object' }, 'fine'), skill(schema, 'bad')])).toThrow(
      /^skill "bad": its input JSON Schema cannot be checked as written/,
    );
    expect(() => new SkillRegistry([skill(schema, 'bad')])).toThrow(what);
  });

  it('refuses an input that is neither zod nor a JSON Schema', () => {
    for (const [input, kind] of [
      ['name', 'a string'],
      [[], 'an array'],
      [null, 'null'],
    ] as const) {
      expect(() => new SkillRegistry([skill(input as unknown as JsonSchema, 'bad')])).toThrow(
        `skill "bad": its input JSON Schema must be an object or true/false (or the input a zod schema), not ${kind}`,
      );
    }
  });
});

describe('MCP tools/list', () => {
  it('shows a JSON Schema input as its author wrote it (without $schema), a zod one as zod renders it', () => {
    const registry = new SkillRegistry([skill(GREET), skill(GREET_ZOD, 'zod'), skill(true, 'any')]);
    const [json, zod, any] = toolsFor(registry, {}).map((t) => t.inputSchema);
    const { $schema: _, ...written } = GREET as Record<string, unknown>;
    expect(json).toEqual(written);
    expect(json).toBe(toolsFor(registry, {})[0]?.inputSchema); // built once
    expect(zod).toMatchObject({ type: 'object', additionalProperties: false, required: ['name'] });
    expect(zod).not.toHaveProperty('$schema');
    expect(any).toEqual({ type: 'object' });
  });
});
