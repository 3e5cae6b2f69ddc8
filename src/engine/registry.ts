import { zodWords } from '../words/zod-words.js';
import { EngineError } from './errors.js';
import type { CallerPolicy } from './grant.js';
import { type AnySkill, isRemote } from './skill.js';
import { type SkillInput, skillInput } from './skill-input.js';

/** The skills this agent offers: how a caller's choice and input are checked. */
export class SkillRegistry {
  readonly #skills = new Map<string, AnySkill>();
  /** Each skill's input, zod or JSON Schema as written, in the one form the rest of the server reads. */
  readonly #inputs = new Map<string, SkillInput>();
  /**
   * The skill that takes a message naming none (A2A text that starts with no skill's name), if the
   * operator chose one; without it such a message is refused, listing the skills.
   */
  readonly defaultSkill: string | undefined;
  /** The ids of the remote skills, whose tasks workers claim (faces/workers), never the runner. */
  readonly remote: readonly string[];

  /**
   * Throws an Error naming the skill when one is defined twice or its JSON Schema input cannot be
   * checked as written (the server refuses to start with it).
   */
  constructor(skills: readonly AnySkill[], defaultSkill?: string) {
    for (const s of skills) {
      if (this.#skills.has(s.id)) throw new Error(`skill "${s.id}" is defined twice`);
      this.#skills.set(s.id, s);
      this.#inputs.set(s.id, skillInput(s));
    }
    if (defaultSkill !== undefined && !this.#skills.has(defaultSkill)) {
      throw new Error(
        `default skill "${defaultSkill}" is not one of: ${[...this.#skills.keys()].join(', ')}`,
      );
    }
    this.defaultSkill = defaultSkill;
    this.remote = skills.filter(isRemote).map((s) => s.id);
  }

  get(id: string): AnySkill | undefined {
    return this.#skills.get(id);
  }

  all(): AnySkill[] {
    return [...this.#skills.values()];
  }

  /** The skill `id`, if it exists and the caller may use it; errors name the skills on offer. */
  use(id: string, policy: CallerPolicy = {}): AnySkill {
    const skill = this.#skills.get(id);
    if (!skill) {
      throw new EngineError(
        'unknown-skill',
        `Unknown skill "${id}"; this agent offers: ${[...this.#skills.keys()].join(', ')}`,
      );
    }
    if (policy.worker) {
      throw new EngineError(
        'forbidden',
        "This credential is a worker's (WORKERS): it claims and works tasks at /v1/workers and cannot create them; call with a caller's credential",
      );
    }
    if (policy.skills && !policy.skills.has(skill.id)) {
      throw new EngineError('forbidden', `You may not use the skill "${skill.id}"`);
    }
    return skill;
  }

  /** The skill's input, validated (defaults filled in); the error names the offending field. */
  parseInput(skill: AnySkill, raw: unknown): unknown {
    // The words given per parse: the schema may come from the author's own copy of zod.
    const parsed = this.#inputOf(skill).schema.safeParse(raw, { error: zodWords });
    if (parsed.success) return parsed.data;
    // A typo in a key explains the rest (a required field "missing"): say it first.
    const { issues } = parsed.error;
    const issue = issues.find((i) => i.code === 'unrecognized_keys') ?? issues[0];
    const where = issue?.path.length ? `input.${issue.path.join('.')}` : 'input';
    throw new EngineError(
      'invalid-params',
      `Invalid ${where} for skill "${skill.id}": ${issue?.message ?? 'invalid'}`,
    );
  }

  /** The skill's input as JSON Schema, to show callers: a JSON Schema input as its author wrote it. */
  inputJsonSchema(skill: AnySkill): Record<string, unknown> {
    return this.#inputOf(skill).jsonSchema();
  }

  #inputOf(skill: AnySkill): SkillInput {
    const input = this.#inputs.get(skill.id);
    if (!input) throw new Error(`skill "${skill.id}" is not one of this registry's`);
    return input;
  }
}
