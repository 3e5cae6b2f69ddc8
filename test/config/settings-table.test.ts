import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { OPTIONS_FILE, optionsSource } from '../../src/config/options-source.js';
import { SETTINGS_DOC, settingRows, TABLE_END, TABLE_START } from '../../src/config/table.js';

/** docs/settings.md's Settings table, row by row: setting name -> [option, default, meaning] as written. */
function readmeRows(): Map<string, [string, string, string]> {
  const readme = readFileSync(new URL(`../../${SETTINGS_DOC}`, import.meta.url), 'utf8');
  const start = readme.indexOf(TABLE_START);
  const end = readme.indexOf(TABLE_END);
  expect(start, `${SETTINGS_DOC} has no ${TABLE_START} marker`).toBeGreaterThan(-1);
  expect(end, `${SETTINGS_DOC} has no ${TABLE_END} after the start marker`).toBeGreaterThan(start);
  const rows = new Map<string, [string, string, string]>();
  for (const line of readme.slice(start, end).split('\n')) {
    const cells = /^\| `([A-Z0-9_]+)` +\| `(\w+)` +\| (.*?) +\| (.*?) +\|$/.exec(line);
    if (cells) rows.set(cells[1] as string, [cells[2] as string, cells[3] as string, cells[4] as string]);
  }
  return rows;
}

describe('the Settings table of docs/settings.md', () => {
  it('lists every setting of src/config/settings.ts, and only those, as the schema describes them (npm run docs:settings fixes it)', () => {
    const written = readmeRows();
    const problems: string[] = [];
    for (const row of settingRows()) {
      const cells = written.get(row.name);
      if (!cells) problems.push(`${row.name}: missing from ${SETTINGS_DOC}`);
      else if (cells[0] !== row.option)
        problems.push(`${row.name}: ${SETTINGS_DOC} says option ${cells[0]}, the code ${row.option}`);
      else if (cells[1] !== row.shownDefault)
        problems.push(
          `${row.name}: ${SETTINGS_DOC} says default ${cells[1]}, src/config/settings.ts ${row.shownDefault}`,
        );
      else if (cells[2] !== row.description)
        problems.push(
          `${row.name}: ${SETTINGS_DOC} says "${cells[2]}", src/config/settings.ts "${row.description}"`,
        );
      written.delete(row.name);
    }
    for (const name of written.keys())
      problems.push(`${name}: in ${SETTINGS_DOC} but not a setting of src/config/settings.ts`);
    expect(problems).toEqual([]);
  });

  it('the typed options of createServer (src/config/settings-options.ts) are those of the schema (npm run docs:settings fixes them)', () => {
    const written = readFileSync(new URL(`../../${OPTIONS_FILE}`, import.meta.url), 'utf8');
    expect(written).toBe(optionsSource());
  });

  it('shows defaults as a person reads them', () => {
    const shown = Object.fromEntries(settingRows().map((r) => [r.name, r.shownDefault]));
    expect(shown).toMatchObject({
      PORT: '`41241`',
      MAX_TTL_MS: '`2592000000` (30 days)',
      PUSH_MAX_AGE_MS: '`86400000` (24 h)',
      INLINE_ARTIFACT_BYTES: '`65536` (64 KiB)',
      API_KEYS_FILE: '(none)',
      PUSH_ALLOW: '(empty)',
      RATE_LIMIT_BURST: '`2 × RATE_LIMIT_PER_S`',
    });
  });
});
