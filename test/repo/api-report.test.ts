import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CompilerState,
  Extractor,
  ExtractorConfig,
  type ExtractorMessage,
  type ExtractorResult,
} from '@microsoft/api-extractor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The public API is what dist/src/index.d.ts (package.json exports ".") exposes, as API Extractor
// reports it; etc/taskhandle.api.md is that report as last reviewed. npm test builds dist first.
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CONFIG_FILE = join(ROOT, 'api-extractor.json');
const ENTRY = join(ROOT, 'dist/src/index.d.ts');
const CHANGED =
  'the public API changed: review etc/taskhandle.api.md with `npm run api:report` and commit it on purpose ' +
  '(semver: an addition is a minor release, a removal or change a major one)';

interface Run {
  result: ExtractorResult;
  messages: ExtractorMessage[];
}

function configFor(
  entry: string,
  reportTempFolder?: string,
  reportFolder?: string,
  configFile = CONFIG_FILE,
): ExtractorConfig {
  const configObject = ExtractorConfig.loadFile(configFile);
  configObject.mainEntryPointFilePath = entry;
  configObject.apiReport = {
    ...configObject.apiReport,
    enabled: true,
    ...(reportTempFolder && { reportTempFolder }),
    ...(reportFolder && { reportFolder }),
  };
  return ExtractorConfig.prepare({
    configObject,
    configObjectFullPath: configFile,
    packageJsonFullPath: join(ROOT, 'package.json'),
  });
}

// Non-local, as CI would: a differing report is flagged, never copied over the committed one.
function run(config: ExtractorConfig, compilerState: CompilerState): Run {
  const messages: ExtractorMessage[] = [];
  const result = Extractor.invoke(config, {
    localBuild: false,
    compilerState,
    printApiReportDiff: true,
    messageCallback: (message) => {
      messages.push(message);
      message.handled = true;
    },
  });
  return { result, messages };
}

// The diff when there is one, else what API Extractor said of the report (e.g. that it is missing).
const diffOf = (r: Run): string =>
  r.messages.find((m) => m.messageId === 'console-api-report-diff')?.text ??
  r.messages
    .filter((m) => m.messageId.startsWith('console-api-report'))
    .map((m) => m.text)
    .join('\n');
const errorsOf = (r: Run): string =>
  r.messages
    .filter((m) => m.logLevel === 'error')
    .map((m) => m.formatMessageWithLocation(ROOT))
    .join('\n');

// Made-up changes, each an index.d.ts of its own (the report names the entry file) beside dist/src.
const VARIANTS = {
  unchanged: (d: string) => d,
  removed: (d: string) => d.replace(/^export \{ JobError \} from .*\n/m, ''),
  changed: (d: string) =>
    d.replace(
      /^export \{ createServer, (.*) \} from '(.*)';$/m,
      "export { $1 } from '$2';\nimport type { ServerOptions } from '$2';\n" +
        'export declare function createServer(options?: ServerOptions): Promise<void>;',
    ),
};
type Variant = keyof typeof VARIANTS;

describe('the public API (etc/taskhandle.api.md)', () => {
  let tmp: string;
  let compilerState: CompilerState;
  let actual: Run;
  const entries = {} as Record<Variant, string>;

  beforeAll(() => {
    tmp = mkdtempSync(join(ROOT, 'dist', 'api-report-test-'));
    const source = readFileSync(ENTRY, 'utf8').replaceAll("from './", "from '../../src/");
    for (const [name, mutate] of Object.entries(VARIANTS)) {
      const entry = join(tmp, name, 'index.d.ts');
      mkdirSync(join(tmp, name));
      writeFileSync(entry, mutate(source));
      entries[name as Variant] = entry;
    }
    const config = configFor(ENTRY);
    // One program holds the real entry and every variant, so the type checker runs once.
    compilerState = CompilerState.create(config, { additionalEntryPoints: Object.values(entries) });
    actual = run(config, compilerState);
  });
  afterAll(() => {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('matches the committed report', () => {
    expect(errorsOf(actual)).toBe('');
    expect(actual.result.apiReportChanged, `${CHANGED}\n\n${diffOf(actual)}`).toBe(false);
  });

  // The variants are compared with the report just generated from dist (in dist/api-report/), not
  // the committed one, so that they test the check itself whatever the state of etc/.
  const variant = (name: Variant): Run =>
    run(configFor(entries[name], join(tmp, name), join(ROOT, 'dist', 'api-report')), compilerState);

  it('a copy of the entry point with nothing changed reads as unchanged', () => {
    const r = variant('unchanged');
    expect(errorsOf(r)).toBe('');
    expect(r.result.apiReportChanged, diffOf(r)).toBe(false);
  });

  it('an exported name removed is caught', () => {
    const r = variant('removed');
    expect(r.result.apiReportChanged).toBe(true);
    expect(diffOf(r)).toContain('\n-export class JobError extends Error {\n');
  });

  it("an exported function's declared type changed is caught", () => {
    const r = variant('changed');
    expect(r.result.apiReportChanged).toBe(true);
    const diff = diffOf(r);
    const signature = 'export function createServer(options?: ServerOptions): Promise';
    expect(diff).toContain(`\n-${signature}<TaskServer>;\n`);
    expect(diff).toContain(`\n+${signature}<void>;\n`);
  });
});

// The second entry point (package.json exports "./worker"), reported in etc/taskhandle-worker.api.md.
const WORKER_CONFIG_FILE = join(ROOT, 'api-extractor.worker.jsonc');
const WORKER_ENTRY = join(ROOT, 'dist/src/worker/index.d.ts');

describe('the public API of taskhandle/worker (etc/taskhandle-worker.api.md)', () => {
  it('matches the committed report', () => {
    const config = configFor(WORKER_ENTRY, undefined, undefined, WORKER_CONFIG_FILE);
    const r = run(config, CompilerState.create(config));
    expect(errorsOf(r)).toBe('');
    const changed =
      'the API of taskhandle/worker changed: review etc/taskhandle-worker.api.md with ' +
      '`npm run api:report` and commit it on purpose';
    expect(r.result.apiReportChanged, `${changed}\n\n${diffOf(r)}`).toBe(false);
  });
});
