import { didYouMean } from '../words/did-you-mean.js';
import { kindOf } from '../words/zod-words.js';
import { ConfigError } from './error.js';
import { redactUrl, SETTINGS } from './settings.js';

/** A setting's name as the environment spells it (`PORT`, `DATABASE_URL`). */
export type SettingName = keyof typeof SETTINGS.shape;

/** The option createServer takes a setting as, where its camelCase name would not read well. */
const RENAMED: Partial<Record<SettingName, string>> = {
  DATABASE_URL: 'database',
  SKILLS: 'skillModules',
};

/**
 * The option a setting is given as: its name in camelCase (`MAX_BODY_BYTES` -> `maxBodyBytes`),
 * `database` for DATABASE_URL and `skillModules` for SKILLS (`skills` takes skill objects).
 */
export const optionName = (setting: SettingName): string =>
  RENAMED[setting] ?? setting.toLowerCase().replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/**
 * What type an option of a setting takes. The environment holds strings; an option holds its value:
 * a number, true or false, an array of strings for a comma-separated list, one of an enum's values.
 * `builtins`: BUILTIN_SKILLS, which takes true (all), false (none) or the ids to keep.
 */
export type OptionKind =
  | { kind: 'number' | 'boolean' | 'list' | 'string' | 'builtins' }
  | { kind: 'enum'; values: string[] };

interface ZodNode {
  def: { type: string; innerType?: ZodNode; in?: ZodNode; entries?: Record<string, string> };
  meta(): { list?: boolean } | undefined;
}

/** The kind of a setting, read from its schema (under its default, optional and transform). */
export function optionKind(setting: SettingName): OptionKind {
  if (setting === 'BUILTIN_SKILLS') return { kind: 'builtins' };
  const schema = SETTINGS.shape[setting] as unknown as ZodNode;
  if (schema.meta()?.list) return { kind: 'list' };
  let node = schema;
  while (node.def.innerType ?? node.def.in) node = (node.def.innerType ?? node.def.in) as ZodNode;
  if (node.def.type === 'number') return { kind: 'number' };
  if (node.def.type === 'enum') {
    const values = Object.values(node.def.entries ?? {});
    return values.length === 2 && values.includes('true') && values.includes('false')
      ? { kind: 'boolean' }
      : { kind: 'enum', values };
  }
  return { kind: 'string' };
}

const SETTING_OF = new Map(
  (Object.keys(SETTINGS.shape) as SettingName[]).map((s) => [optionName(s), s] as const),
);

/** Every option name createServer takes for a setting, in the schema's order. */
export const OPTION_NAMES: readonly string[] = [...SETTING_OF.keys()];

/** A setting given as an option: how the error lines show it (`port=70000`). */
export interface GivenOption {
  shown: string;
}

/**
 * The options, as the environment would spell them (`{ port: 0 }` -> `{ PORT: '0' }`), so that one
 * schema validates both with the same words. A name that is no option, or a value of a type no
 * setting takes (an object, a number for a path), is refused here, naming the option.
 */
export function settingsOfOptions(options: Readonly<Record<string, unknown>>): {
  env: Record<string, string>;
  given: Map<string, GivenOption>;
} {
  const env: Record<string, string> = {};
  const given = new Map<string, GivenOption>();
  for (const [option, value] of Object.entries(options)) {
    if (value === undefined) continue;
    const setting = SETTING_OF.get(option);
    if (!setting)
      throw new ConfigError(
        `createServer: unknown option "${option}"${didYouMean(option, OPTION_NAMES, (g) => `"${g}"`)}; ` +
          'the options are the settings of docs/settings.md in camelCase (PORT -> port, MAX_BODY_BYTES -> maxBodyBytes)',
      );
    env[setting] = asSetting(option, value, optionKind(setting));
    // A password in the database's URL never reaches an error line.
    const display = setting === 'DATABASE_URL' && typeof value === 'string' ? redactUrl(value) : value;
    given.set(setting, { shown: `${option}=${shown(display)}` });
  }
  return { env, given };
}

function asSetting(option: string, value: unknown, kind: OptionKind): string {
  const refuse = (expected: string) =>
    new ConfigError(
      `Invalid settings:\n  ${option}=${shown(value)}: must be ${expected}, not ${kindOf(value)}`,
    );
  switch (kind.kind) {
    case 'number':
      if (typeof value === 'number' || typeof value === 'string') return String(value);
      throw refuse('a number');
    case 'boolean':
      if (typeof value === 'boolean' || value === 'true' || value === 'false') return String(value);
      throw refuse('true or false');
    case 'builtins':
      if (typeof value === 'boolean') return value ? 'all' : 'none';
      return asList(option, value, refuse('true, false or an array of skill ids'));
    case 'list':
      return asList(option, value, refuse('an array of strings'));
    default:
      if (typeof value === 'string') return value;
      throw refuse(kind.kind === 'enum' ? `one of ${kind.values.join(', ')}` : 'a string');
  }
}

/** An array of strings (or the comma-separated string itself) as the comma-separated setting. */
function asList(option: string, value: unknown, refusal: ConfigError): string {
  if (typeof value === 'string') return value;
  if (!Array.isArray(value) || !value.every((v): v is string => typeof v === 'string')) throw refusal;
  const joined = value.find((v) => v.includes(','));
  if (joined !== undefined)
    throw new ConfigError(
      `Invalid settings:\n  ${option}: the entry ${JSON.stringify(joined)} holds a comma; give each as an entry of its own`,
    );
  return value.join(',');
}

/** A given value, short enough for an error line. */
const shown = (value: unknown): string => {
  const text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
};
