#!/usr/bin/env node
// `npm run docs:settings`: rewrites the README's Settings table from the schema in src/config/settings.ts.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from './settings.js';
import { withSettingsTable } from './table.js';

const file = join(PACKAGE_ROOT, 'README.md');
const before = readFileSync(file, 'utf8');
const after = withSettingsTable(before);
if (after !== before) writeFileSync(file, after);
console.log(
  after === before ? 'README.md: the Settings table is up to date' : 'README.md: Settings table rewritten',
);
