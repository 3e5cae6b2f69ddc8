import { EngineError } from './errors.js';
import type { AnySkill } from './skill.js';
import type { Message } from './task.js';

/** The `{"skill": ..., "input": {...}}` data part that picks a skill explicitly. */
interface SkillCall {
  skill?: unknown;
  input?: unknown;
}

/** The skills this agent offers, and how a message picks one. */
export class SkillRegistry {
  readonly #skills = new Map<string, AnySkill>();
  readonly defaultSkill: string;

  constructor(skills: readonly AnySkill[], defaultSkill: string) {
    for (const s of skills) {
      if (this.#skills.has(s.id)) throw new Error(`skill "${s.id}" is defined twice`);
      this.#skills.set(s.id, s);
    }
    if (!this.#skills.has(defaultSkill)) {
      throw new Error(
        `default skill "${defaultSkill}" is not one of: ${[...this.#skills.keys()].join(', ')}`,
      );
    }
    this.defaultSkill = defaultSkill;
  }

  get(id: string): AnySkill | undefined {
    return this.#skills.get(id);
  }

  all(): AnySkill[] {
    return [...this.#skills.values()];
  }

  /**
   * Picks the skill of a message (a data part `{"skill", "input"}`, else `metadata.skill`, else the
   * default skill) and validates its input. Errors name the skill or the offending field.
   */
  resolve(message: Message): { skill: AnySkill; input: unknown } {
    const call = message.parts.map((p) => p.data).find(isSkillCall);
    const fromMetadata = message.metadata?.skill;
    const id =
      typeof call?.skill === 'string'
        ? call.skill
        : typeof fromMetadata === 'string'
          ? fromMetadata
          : this.defaultSkill;
    const skill = this.#skills.get(id);
    if (!skill) {
      throw new EngineError(
        'unknown-skill',
        `Unknown skill "${id}"; this agent offers: ${[...this.#skills.keys()].join(', ')}`,
      );
    }
    const raw =
      call && 'input' in call
        ? call.input
        : (message.metadata?.input ?? skill.inputFromMessage?.(message) ?? {});
    const parsed = skill.input.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue?.path.length ? `input.${issue.path.join('.')}` : 'input';
      throw new EngineError(
        'invalid-params',
        `Invalid ${where} for skill "${id}": ${issue?.message ?? 'invalid'}`,
      );
    }
    return { skill, input: parsed.data };
  }
}

const isSkillCall = (data: unknown): data is SkillCall =>
  typeof data === 'object' &&
  data !== null &&
  !Array.isArray(data) &&
  typeof (data as SkillCall).skill === 'string';
