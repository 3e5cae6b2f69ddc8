import { ConfigError } from '../config/error.js';
import { type Config, listOf } from '../config/settings.js';
import type { AnySkill } from '../engine/skill.js';
import { requireReadableFile } from '../files/required-file.js';
import { commandSkill, loadCommands } from '../skills/command.js';
import { skillProblem } from '../skills/definition.js';
import { BUILTIN_SKILLS } from '../skills/index.js';
import { loadSkillModules, type SkillSource } from '../skills/modules.js';
import { didYouMean } from '../words/did-you-mean.js';

/**
 * Every skill this server offers, in the order callers see them: the built-ins BUILTIN_SKILLS
 * keeps, `command` (COMMANDS_FILE), the skills of the SKILLS modules, then createServer's `skills`.
 * An id defined twice stops the start, naming both places.
 */
export async function offeredSkills(config: Config, given: readonly unknown[]): Promise<SkillSource[]> {
  const sources = [
    ...builtins(config),
    ...operatorSkills(config),
    ...(await loadSkillModules(listOf(config.SKILLS))),
    ...given.map((skill, i): SkillSource => {
      const problem = skillProblem(skill);
      if (problem) throw new ConfigError(`createServer: skills[${i}] is not a valid skill: ${problem}`);
      return { skill: skill as AnySkill, from: 'createServer', exportName: `skills[${i}]` };
    }),
  ];
  const byId = new Map<string, SkillSource>();
  const offered: SkillSource[] = [];
  for (const source of sources) {
    const first = byId.get(source.skill.id);
    if (first?.skill === source.skill) continue;
    if (first) throw twice(first, source);
    byId.set(source.skill.id, source);
    offered.push(source);
  }
  return offered;
}

/** The built-in skills BUILTIN_SKILLS keeps: `all`, `none`, or their ids. */
function builtins(config: Config): SkillSource[] {
  const setting = config.BUILTIN_SKILLS;
  const all = BUILTIN_SKILLS.map((skill): SkillSource => ({ skill, from: 'built-in' }));
  if (setting.trim() === 'all') return all;
  if (setting.trim() === 'none') return [];
  const ids = all.map((s) => s.skill.id);
  const keep = listOf(setting);
  for (const id of keep) {
    if (!ids.includes(id))
      throw new ConfigError(
        `${config.given('BUILTIN_SKILLS')}: no built-in skill "${id}"${didYouMean(id, ids, (g) => `"${g}"`)}; ` +
          `the built-ins are ${ids.join(', ')} (or say all, or none)`,
      );
  }
  return all.filter((s) => keep.includes(s.skill.id));
}

/** Skills the operator configures: `command`, when COMMANDS_FILE names its allow-list. */
function operatorSkills(config: Config): SkillSource[] {
  if (!config.COMMANDS_FILE) return [];
  requireReadableFile(
    'COMMANDS_FILE',
    config.COMMANDS_FILE,
    'write the allow-list there (a JSON array of commands: docs/skills.md, "The command skill"), or unset COMMANDS_FILE',
  );
  try {
    const skill = commandSkill(loadCommands(config.COMMANDS_FILE), {
      killGraceMs: config.COMMAND_KILL_GRACE_MS,
      concurrency: config.COMMAND_MAX_RUNNING || undefined,
    });
    return [{ skill, from: 'COMMANDS_FILE' }];
  } catch (err) {
    throw new ConfigError(`COMMANDS_FILE=${config.COMMANDS_FILE}: ${(err as Error).message}`);
  }
}

/** Where a skill was defined, as a start refusal names it. */
const where = (s: SkillSource): string =>
  s.from === 'built-in'
    ? 'the built-in skills'
    : s.from === 'createServer'
      ? `createServer's ${s.exportName}`
      : s.from === 'COMMANDS_FILE'
        ? 'COMMANDS_FILE'
        : `${s.from} (export "${s.exportName}")`;

function twice(first: SkillSource, second: SkillSource): ConfigError {
  const builtin = first.from === 'built-in' || second.from === 'built-in';
  return new ConfigError(
    `skill "${first.skill.id}" is defined twice: by ${where(first)} and by ${where(second)}; give one of them another id` +
      (builtin
        ? ', or leave the built-in out (BUILTIN_SKILLS, or builtinSkills in createServer, lists the ones to keep)'
        : ''),
  );
}
