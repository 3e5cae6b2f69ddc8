import { type OptionKind, optionKind, optionName, type SettingName } from './options.js';
import { SETTINGS } from './settings.js';
import { settingRows } from './table.js';

/** Where `npm run docs:settings` writes the Settings interface (a test checks it is current). */
export const OPTIONS_FILE = 'src/config/settings-options.ts';

const typeOf = (setting: SettingName, kind: OptionKind): string => {
  if (setting === 'DATABASE_URL') return 'DatabaseUrl';
  switch (kind.kind) {
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'list':
      return 'readonly string[]';
    case 'builtins':
      return 'boolean | readonly string[]';
    case 'enum':
      return kind.values.map((v) => `'${v}'`).join(' | ');
    default:
      return 'string';
  }
};

/** A doc comment's text in lines of at most `width` characters, each starting with ` * `. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines.map((l) => `   * ${l}`);
}

/**
 * The TypeScript source of the `Settings` interface: every setting of src/config/settings.ts as an
 * option of createServer, typed by its kind, with the Settings table's words as its doc comment.
 */
export function optionsSource(): string {
  const rows = new Map(settingRows().map((r) => [r.name, r]));
  const members = (Object.keys(SETTINGS.shape) as SettingName[]).flatMap((setting) => {
    const row = rows.get(setting);
    const words = `${row?.description ?? ''}. Setting \`${setting}\`; default ${row?.shownDefault ?? '(none)'}.`;
    return [
      '  /**',
      ...wrap(words, 100),
      '   */',
      `  ${optionName(setting)}?: ${typeOf(setting, optionKind(setting))};`,
    ];
  });
  return [
    '// Written by `npm run docs:settings` from src/config/settings.ts (config/options-source.ts); do not edit.',
    '',
    '/** Where the tasks are kept: a SQLite file (the embedded default), or PostgreSQL for several instances. */',
    'export type DatabaseUrl =',
    // A placeholder of the emitted template literal type, not of this string.
    ...['sqlite:', 'file:', 'postgres://', 'postgresql://'].map(
      (scheme) => `  | \`${scheme}$\{string}\`${scheme === 'postgresql://' ? ';' : ''}`,
    ),
    '',
    '/**',
    ' * Every setting of docs/settings.md, as an option of `createServer`: its name in camelCase',
    ' * (`MAX_BODY_BYTES` -> `maxBodyBytes`; `DATABASE_URL` -> `database`, `SKILLS` -> `skillModules`),',
    ' * its value typed (numbers, booleans, arrays for comma-separated lists). An option left out is',
    " * read from the environment, else the setting's default. Validated as the environment is.",
    ' */',
    'export interface Settings {',
    ...members,
    '}',
    '',
  ].join('\n');
}
