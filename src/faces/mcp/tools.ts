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

/**
 * The skill's input schema (the author's JSON Schema, or zod's rendering of a zod one). MCP wants
 * an object schema: anything else is taken as `{input}`.
 */
function inputSchemaOf(skills: SkillRegistry, skill: AnySkill): Record<string, unknown> {
  const schema = skills.inputJsonSchema(skill);
  return schema.type === 'object' ? schema : { type: 'object' };
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
      inputSchema: inputSchemaOf(skills, s),
      // 2025-11-25: the tool may be called as a task (a handle at once) or plainly (held open to the end).
      execution: { taskSupport: 'optional' },
    }));
}
