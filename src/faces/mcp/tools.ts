import { z } from 'zod';
import type { CallerPolicy } from '../../engine/grant.js';
import type { SkillRegistry } from '../../engine/registry.js';
import type { AnySkill } from '../../engine/skill.js';

export interface Tool {
  name: string;
  title?: string;
  description: string;
  inputSchema: Record<string, unknown>;
  execution: { taskSupport: 'optional' };
}

const schemas = new WeakMap<AnySkill, Record<string, unknown>>();

/**
 * The skill's input schema as JSON Schema (zod 4's generator; strict objects say
 * additionalProperties: false). MCP wants an object schema: anything else is taken as `{input}`.
 * Built once per skill.
 */
function inputSchemaOf(skill: AnySkill): Record<string, unknown> {
  let schema = schemas.get(skill);
  if (!schema) {
    const { $schema: _, ...generated } = z.toJSONSchema(skill.input, { io: 'input', unrepresentable: 'any' });
    schema = generated.type === 'object' ? generated : { type: 'object' };
    schemas.set(skill, schema);
  }
  return schema;
}

/** Every skill the caller may use, as an MCP tool (name: the skill's id). */
export function toolsFor(skills: SkillRegistry, policy: CallerPolicy): Tool[] {
  return skills
    .all()
    .filter((s) => !policy.skills || policy.skills.has(s.id))
    .map((s) => ({
      name: s.id,
      ...(s.name ? { title: s.name } : {}),
      description: s.description,
      inputSchema: inputSchemaOf(s),
      // 2025-11-25: the tool may be called as a task (a handle at once) or plainly (held open to the end).
      execution: { taskSupport: 'optional' },
    }));
}
