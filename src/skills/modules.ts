import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigError } from '../config/error.js';
import type { AnySkill } from '../engine/skill.js';
import { looksLikeSkill, skillProblem } from './definition.js';

/** A skill the server offers, and where it came from (the startup line and start refusals say it). */
export interface SkillSource {
  skill: AnySkill;
  /** `built-in`, `createServer` (its `skills` option), or the module's path as SKILLS gave it. */
  from: string;
  /** The module's export that holds it (`default`, `default[1]`, `report`). */
  exportName?: string;
}

const HOW =
  "export skills made with defineSkill (import { defineSkill } from 'taskhandle'): " +
  'as the default export (one skill or an array of them) or as named exports';

/**
 * The skills of each module of SKILLS, in order. A module that is missing, cannot be imported,
 * throws while loading, exports something skill-like that is no valid skill, or exports no skill at
 * all stops the start with a ConfigError naming the file, the export and what to do. One skill
 * object exported twice (named and in the default array) counts once.
 */
export async function loadSkillModules(
  paths: readonly string[],
  cwd = process.cwd(),
): Promise<SkillSource[]> {
  const loaded: SkillSource[] = [];
  for (const path of paths) {
    const exports = await importModule(path, cwd);
    const found = skillsOf(path, exports);
    if (found.length === 0) {
      const names = Object.keys(exports);
      throw new ConfigError(
        `SKILLS: ${path} exports no skill (${names.length > 0 ? `its exports: ${names.join(', ')}` : 'it exports nothing'}); ${HOW}`,
      );
    }
    loaded.push(...found);
  }
  return loaded;
}

async function importModule(path: string, cwd: string): Promise<Record<string, unknown>> {
  const file = resolve(cwd, path);
  if (!existsSync(file) || !statSync(file).isFile())
    throw new ConfigError(
      `SKILLS: ${path}: no such file (looked for ${file}); relative paths start from the directory the server runs in (${cwd})`,
    );
  try {
    return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (err) {
    throw new ConfigError(`SKILLS: ${path}: ${importFailure(err)}`);
  }
}

/** Why a module did not load, and what to do about it. */
function importFailure(err: unknown): string {
  const e = err as { name?: string; code?: string; message?: string };
  const message = String(e.message ?? err).split('\n')[0];
  if (e.code === 'ERR_MODULE_NOT_FOUND' || e.code === 'ERR_PACKAGE_PATH_NOT_EXPORTED')
    return `it imports something that cannot be found (${message}); install the package beside the module (npm install in its folder), or fix the import`;
  if (e.code === 'ERR_REQUIRE_ESM' || e.code === 'ERR_UNKNOWN_FILE_EXTENSION')
    return `cannot be imported as an ES module (${message}); give a .mjs or .js file of a "type": "module" package (compile TypeScript first)`;
  if (e.name === 'SyntaxError')
    return `is not valid JavaScript (${message}); run \`node --check <file>\` to see where, and compile TypeScript first`;
  return `threw while loading (${e.name ?? 'Error'}: ${message}); a skill module should only define skills when imported`;
}

/** The module's skills, each once; a skill-like export that is not a valid skill stops the start. */
function skillsOf(path: string, exports: Record<string, unknown>): SkillSource[] {
  const seen = new Set<unknown>();
  const found: SkillSource[] = [];
  const take = (value: unknown, exportName: string) => {
    if (seen.has(value)) return;
    const problem = skillProblem(value);
    if (problem)
      throw new ConfigError(`SKILLS: ${path}, export "${exportName}": not a valid skill: ${problem}. ${HOW}`);
    seen.add(value);
    found.push({ skill: value as AnySkill, from: path, exportName });
  };
  // The default export first: the order the author listed there is the order callers see.
  const names = Object.keys(exports).sort((a, b) => Number(b === 'default') - Number(a === 'default'));
  for (const name of names) {
    const value = exports[name];
    if (Array.isArray(value) && value.some(looksLikeSkill))
      value.forEach((v, i) => {
        take(v, `${name}[${i}]`);
      });
    else if (looksLikeSkill(value)) take(value, name);
  }
  return found;
}
