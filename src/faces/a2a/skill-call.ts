import type { SkillRegistry } from '../../engine/registry.js';
import type { Message } from '../../engine/task.js';

/** What an A2A message asks for: the skill's id and its input as sent (the engine validates it). */
export interface SkillCall {
  skill: string;
  input: unknown;
}

/**
 * Reads which skill an A2A message asks for, and with what input: a data part
 * `{"skill": ..., "input": {...}}`, else `metadata.skill` (with `metadata.input`), else the default
 * skill; without an explicit input, the skill reads one from the message's text.
 */
export function skillCallOf(message: Message, skills: SkillRegistry): SkillCall {
  const call = message.parts.map((p) => p.data).find(isExplicitCall);
  const fromMetadata = message.metadata?.skill;
  const skill =
    typeof call?.skill === 'string'
      ? call.skill
      : typeof fromMetadata === 'string'
        ? fromMetadata
        : skills.defaultSkill;
  if (call && 'input' in call) return { skill, input: call.input };
  const input = message.metadata?.input ?? skills.get(skill)?.inputFromText?.(textOf(message));
  return { skill, input: input ?? {} };
}

const textOf = (message: Message): string =>
  message.parts
    .map((p) => p.text ?? '')
    .join(' ')
    .trim();

const isExplicitCall = (data: unknown): data is { skill: string; input?: unknown } =>
  typeof data === 'object' &&
  data !== null &&
  !Array.isArray(data) &&
  typeof (data as { skill?: unknown }).skill === 'string';
