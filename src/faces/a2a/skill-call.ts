import { EngineError } from '../../engine/errors.js';
import type { SkillRegistry } from '../../engine/registry.js';
import type { Message } from '../../engine/task.js';

/** What an A2A message asks for: the skill's id and its input as sent (the engine validates it). */
export interface SkillCall {
  skill: string;
  input: unknown;
}

/**
 * Reads which skill an A2A message asks for, and with what input: a data part
 * `{"skill": ..., "input": {...}}`, else `metadata.skill` (with `metadata.input`), else the text's
 * first word naming a skill ("export 500 rows"; the skill reads its input from the rest), else the
 * operator's default skill (DEFAULT_SKILL, given the whole text). A message that names no skill
 * where there is no default is refused, listing the skills with an example: a guess would start
 * work nobody asked for.
 */
export function skillCallOf(message: Message, skills: SkillRegistry): SkillCall {
  const call = message.parts.map((p) => p.data).find(isExplicitCall);
  if (call)
    return { skill: call.skill, input: 'input' in call ? call.input : fromText(skills, call.skill, message) };
  const named = message.metadata?.skill;
  if (typeof named === 'string') {
    return { skill: named, input: message.metadata?.input ?? fromText(skills, named, message) };
  }
  const text = textOf(message);
  const [first = '', ...rest] = text.split(/\s+/);
  const byWord = skills.all().find((s) => s.id.toLowerCase() === first.toLowerCase());
  if (byWord) return { skill: byWord.id, input: byWord.inputFromText?.(rest.join(' ')) ?? {} };
  const fallback = skills.defaultSkill;
  if (fallback !== undefined) {
    return { skill: fallback, input: message.metadata?.input ?? fromText(skills, fallback, message) };
  }
  throw new EngineError('unknown-skill', noSkillNamed(skills, text));
}

function fromText(skills: SkillRegistry, id: string, message: Message): unknown {
  return skills.get(id)?.inputFromText?.(textOf(message)) ?? {};
}

/** The refusal of a message that names no skill: the skills, and how to name one. */
function noSkillNamed(skills: SkillRegistry, text: string): string {
  const all = skills.all();
  const ids = all.map((s) => s.id);
  const example = all.flatMap((s) => s.examples ?? []).find((e) => !e.startsWith('{')) ?? `${ids[0]} ...`;
  const said = text
    ? `"${text.length > 40 ? `${text.slice(0, 40)}...` : text}" names no skill`
    : 'This message names no skill';
  return `${said}: start the text with one of ${ids.join(', ')} (e.g. "${example}"), or send a data part {"skill": "${ids[0]}", "input": {...}}; the agent card lists each skill's input`;
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
