#!/usr/bin/env node
// `npm run docs:settings`: rewrites docs/settings.md's Settings table and the typed options of
// createServer (src/config/settings-options.ts) from the schema in src/config/settings.ts.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { OPTIONS_FILE, optionsSource } from './options-source.js';
import { PACKAGE_ROOT } from './settings.js';
import { SETTINGS_DOC, withSettingsTable } from './table.js';

const rewrite = (file: string, make: (before: string) => string): void => {
  const path = join(PACKAGE_ROOT, file);
  const before = readFileSync(path, 'utf8');
  const after = make(before);
  if (after !== before) writeFileSync(path, after);
  console.log(after === before ? `${file}: up to date` : `${file}: rewritten`);
};

rewrite(SETTINGS_DOC, withSettingsTable);
rewrite(OPTIONS_FILE, optionsSource);
