import { optionName, type SettingName } from './options.js';
import { SETTINGS } from './settings.js';

/** Where the Settings table lives (the README links it). */
export const SETTINGS_DOC = 'docs/settings.md';

/** The markers around the Settings table `npm run docs:settings` writes. */
export const TABLE_START =
  '<!-- settings:start (npm run docs:settings writes this table from src/config/settings.ts) -->';
export const TABLE_END = '<!-- settings:end -->';

export interface SettingRow {
  name: string;
  /** The createServer option that gives it (config/options.ts). */
  option: string;
  /** As the table shows it: `41241`, `65536` (64 KiB), (none), (empty)... */
  shownDefault: string;
  description: string;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** `86400000` (24 h): a duration or a size is also said the way a person reads it. */
function readable(name: string, n: number): string {
  const plain = `\`${n}\``;
  if (name.endsWith('_MS') && n >= MINUTE) {
    if (n % DAY === 0 && n >= 2 * DAY) return `${plain} (${n / DAY} days)`;
    if (n % HOUR === 0) return `${plain} (${n / HOUR} h)`;
    if (n % MINUTE === 0) return `${plain} (${n / MINUTE} min)`;
  }
  if (name.endsWith('_BYTES') && n >= 1024) {
    for (const [unit, size] of [
      ['GiB', 2 ** 30],
      ['MiB', 2 ** 20],
      ['KiB', 2 ** 10],
    ] as const) {
      if (n % size === 0) return `${plain} (${n / size} ${unit})`;
    }
  }
  return plain;
}

/** Every setting of src/config/settings.ts, in its order, as the Settings table shows it. */
export function settingRows(): SettingRow[] {
  return Object.entries(SETTINGS.shape).map(([name, schema]) => {
    const meta = schema.meta() as { description?: string; shownDefault?: string } | undefined;
    if (!meta?.description) throw new Error(`src/config/settings.ts: ${name} has no description (doc(...))`);
    let shownDefault = meta.shownDefault;
    if (shownDefault === undefined) {
      const def = schema.def as { type: string; defaultValue?: unknown };
      if (def.type !== 'default') shownDefault = '(none)';
      else if (def.defaultValue === '') shownDefault = '(empty)';
      else if (typeof def.defaultValue === 'number') shownDefault = readable(name, def.defaultValue);
      else shownDefault = `\`${String(def.defaultValue)}\``;
    }
    return { name, option: optionName(name as SettingName), shownDefault, description: meta.description };
  });
}

/** The Settings table as markdown, columns padded as the formatter leaves them. */
export function settingsTable(rows: SettingRow[] = settingRows()): string {
  const cells = [
    ['variable', 'option', 'default', 'meaning'],
    ...rows.map((r) => [`\`${r.name}\``, `\`${r.option}\``, r.shownDefault, r.description]),
  ];
  const widths = [0, 1, 2, 3].map((i) => Math.max(...cells.map((c) => [...(c[i] ?? '')].length)));
  const line = (c: string[]) =>
    `| ${c.map((cell, i) => cell + ' '.repeat((widths[i] ?? 0) - [...cell].length)).join(' | ')} |`;
  const rule = `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`;
  const [head, ...body] = cells;
  return [line(head ?? []), rule, ...body.map(line)].join('\n');
}

/**
 * docs/settings.md with its Settings table (between the markers) rewritten from the schema.
 *
 * @example
 *   writeFileSync(SETTINGS_DOC, withSettingsTable(readFileSync(SETTINGS_DOC, 'utf8')));
 */
export function withSettingsTable(readme: string): string {
  const start = readme.indexOf(TABLE_START);
  const end = readme.indexOf(TABLE_END);
  if (start < 0 || end < start)
    throw new Error(`${SETTINGS_DOC}: the markers ${TABLE_START} ... ${TABLE_END} are missing`);
  return `${readme.slice(0, start + TABLE_START.length)}\n${settingsTable()}\n${readme.slice(end)}`;
}
