import type { CallerPolicy } from '../../engine/grant.js';
import type { SkillRegistry } from '../../engine/registry.js';
import type { AnySkill } from '../../engine/skill.js';

export interface Tool {
  name: string;
  title?: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** 2025-11-25 only: the Tasks extension (2026-07-28) dropped the tool-level task declaration. */
  execution?: { taskSupport: 'optional' };
}

/**
 * The skill's input schema (the author's JSON Schema, or zod's rendering of a zod one) without
 * empty `{}` sub-schemas (see {@link explicit}). MCP wants an object schema: anything else is taken
 * as `{input}`. Built once per skill.
 */
function inputSchemaOf(skills: SkillRegistry, skill: AnySkill): Record<string, unknown> {
  const schema = skills.inputJsonSchema(skill);
  let shown = SHOWN.get(schema);
  if (!shown) {
    shown = schema.type === 'object' ? explicit(schema) : { type: 'object' };
    SHOWN.set(schema, shown);
  }
  return shown;
}

const SHOWN = new WeakMap<object, Record<string, unknown>>();

/** Every JSON value: what `{}` accepts, said in a type. */
const anyValue = () => ({ type: ['string', 'number', 'boolean', 'object', 'array', 'null'] });

/** Keywords whose value is one sub-schema, and those whose `{}` is the same as leaving them out. */
const ONE_SCHEMA = [
  'items',
  'additionalItems',
  'additionalProperties',
  'unevaluatedItems',
  'unevaluatedProperties',
  'propertyNames',
  'contains',
  'not',
  'if',
  'then',
  'else',
] as const;
const OMITTABLE = new Set([
  'items',
  'additionalItems',
  'additionalProperties',
  'propertyNames',
  'then',
  'else',
]);
/** Keywords whose value is a list of sub-schemas, and those whose value maps names to sub-schemas. */
const SCHEMA_LIST = ['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items'] as const;
const SCHEMA_MAP = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'] as const;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isEmpty = (v: unknown) => isObject(v) && Object.keys(v).length === 0;

/**
 * A schema with no empty `{}` sub-schema, meaning the same: zod renders `z.unknown()` and `z.any()`
 * as `{}` (export's `data` rows, batch's `items`), which strict checkers (the MCP Inspector's
 * `--strict`) flag as a schema that says nothing. Where leaving the keyword out means the same
 * (`items`, `additionalProperties`, ... ) it is left out, unless the schema uses `unevaluated*`
 * anywhere (for which an applied `{}` still counts as evaluated); elsewhere (a property, a list
 * entry) it becomes `{"type": [every JSON type]}`. Values (`default`, `const`, `enum`, `examples`) are not
 * schemas and stay as they are.
 */
export function explicit(schema: Record<string, unknown>): Record<string, unknown> {
  const omit = !/"unevaluated(Items|Properties)"/.test(JSON.stringify(schema));
  const walk = (s: Record<string, unknown>): Record<string, unknown> => {
    const out: Record<string, unknown> = { ...s };
    const sub = (v: unknown) => (isEmpty(v) ? anyValue() : isObject(v) ? walk(v) : v);
    for (const k of ONE_SCHEMA) {
      if (!Object.hasOwn(s, k) || !isObject(s[k])) continue;
      if (omit && OMITTABLE.has(k) && isEmpty(s[k])) delete out[k];
      else out[k] = sub(s[k]);
    }
    for (const k of SCHEMA_LIST) {
      const list = s[k];
      if (Array.isArray(list)) out[k] = list.map(sub);
    }
    for (const k of SCHEMA_MAP) {
      const map = s[k];
      if (isObject(map)) out[k] = Object.fromEntries(Object.entries(map).map(([name, v]) => [name, sub(v)]));
    }
    // draft-07 `dependencies`: a name's sub-schema, or a list of property names (left as it is).
    const deps = s.dependencies;
    if (isObject(deps)) {
      out.dependencies = Object.fromEntries(
        Object.entries(deps).map(([name, v]) => [name, Array.isArray(v) ? v : sub(v)]),
      );
    }
    return out;
  };
  return walk(schema);
}

/**
 * Every skill the caller may use, as an MCP tool (name: the skill's id), in the registry's order
 * (2026-07-28 asks for a deterministic one, for clients' caches). `execution` is 2025-11-25's:
 * under the Tasks extension a client says it takes tasks in its capabilities instead.
 */
export function toolsFor(skills: SkillRegistry, policy: CallerPolicy, withExecution = true): Tool[] {
  return skills
    .all()
    .filter((s) => !policy.skills || policy.skills.has(s.id))
    .map((s) => ({
      name: s.id,
      ...(s.name ? { title: s.name } : {}),
      description: s.description,
      inputSchema: inputSchemaOf(skills, s),
      // 2025-11-25: the tool may be called as a task (a handle at once) or plainly (held open to the end).
      ...(withExecution ? { execution: { taskSupport: 'optional' as const } } : {}),
    }));
}
