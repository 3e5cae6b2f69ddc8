import { execFile } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/**
 * What package.test.ts needs to stand where a user of the library stands: the repository packed as
 * npm publishes it, and a fresh project outside it that installs the tarball.
 */

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FIXTURE = fileURLToPath(new URL('./package-fixture/', import.meta.url));

const execFileP = promisify(execFile);

/** Runs a command to its end; its stdout. A failure says the command and its stderr. */
export async function run(
  command: string,
  args: string[],
  o: { cwd: string; timeoutMs?: number },
): Promise<string> {
  try {
    const { stdout } = await execFileP(command, args, {
      cwd: o.cwd,
      timeout: o.timeoutMs ?? 120_000,
      maxBuffer: 16 * 2 ** 20,
    });
    return stdout;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(
      `${command} ${args.join(' ')} (in ${o.cwd}) failed: ${e.message}\n${e.stdout}\n${e.stderr}`,
    );
  }
}

/**
 * Throws unless dist/src is a build of the sources as they are. The tests do not build: a build
 * empties dist/src first, under the other test files running beside this one.
 */
export function assertBuilt(): void {
  const index = join(ROOT, 'dist/src/index.js');
  if (!existsSync(index)) throw new Error('dist/src/index.js is missing: run `npm run build` first');
  const built = statSync(index).mtimeMs;
  const newer = sources(join(ROOT, 'src')).find((f) => statSync(f).mtimeMs > built);
  if (newer) throw new Error(`${newer} changed after the last build: run \`npm run build\` first`);
}

const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );

/** `npm pack` of the repository into `dest`: the tarball's path and the files it holds. */
export async function pack(dest: string): Promise<{ tarball: string; files: string[] }> {
  // --ignore-scripts: `prepare` would rebuild dist/src (see assertBuilt).
  const out = await run('npm', ['pack', '--ignore-scripts', '--pack-destination', dest, '--json'], {
    cwd: ROOT,
  });
  const [packed] = JSON.parse(out) as { filename: string; files: { path: string }[] }[];
  if (!packed) throw new Error(`npm pack said nothing of a tarball: ${out}`);
  return { tarball: join(dest, packed.filename), files: packed.files.map((f) => f.path).sort() };
}

/**
 * A fresh `{"type": "module"}` project in `dir` with the tarball, zod, and what a TypeScript user
 * has (typescript, @types/node) installed, and the fixture's skill module and server script.
 * Returns how long each step took (ms) and how better-sqlite3 got its native addon.
 */
export async function makeProject(
  dir: string,
  tarball: string,
): Promise<{ installMs: number; addonMs: number; addon: string }> {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
  let started = Date.now();
  // The install scripts are left out: better-sqlite3's compiles from source here (its prebuilt
  // binaries cannot be downloaded), two minutes on two cores; protobufjs's only warns about versions.
  await run(
    'npm',
    [
      'install',
      tarball,
      'zod@4',
      'typescript@5',
      '@types/node@20',
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      '--ignore-scripts',
    ],
    { cwd: dir, timeoutMs: 180_000 },
  );
  const installMs = Date.now() - started;
  started = Date.now();
  const addon = await provideSqliteAddon(dir);
  for (const file of ['my-skills.mjs', 'serve.mjs']) copyFileSync(join(FIXTURE, file), join(dir, file));
  writeFileSync(join(dir, 'check.ts'), TYPES_CHECK);
  writeFileSync(join(dir, 'tsconfig.json'), `${JSON.stringify(TSCONFIG, null, 2)}\n`);
  return { installMs, addonMs: Date.now() - started, addon };
}

/**
 * better-sqlite3's native addon for the project: the repository's own build when it is of the same
 * version (the same sources, compiled by this node for this machine), else compiled there.
 */
async function provideSqliteAddon(dir: string): Promise<string> {
  const ours = dirname(createRequire(join(ROOT, 'package.json')).resolve('better-sqlite3/package.json'));
  const theirs = join(dir, 'node_modules/better-sqlite3');
  const version = (d: string) =>
    (JSON.parse(readFileSync(join(d, 'package.json'), 'utf8')) as { version: string }).version;
  const built = join(ours, 'build/Release/better_sqlite3.node');
  if (existsSync(built) && version(ours) === version(theirs)) {
    mkdirSync(join(theirs, 'build/Release'), { recursive: true });
    copyFileSync(built, join(theirs, 'build/Release/better_sqlite3.node'));
    return `copied (better-sqlite3 ${version(ours)})`;
  }
  await run('npm', ['rebuild', 'better-sqlite3'], { cwd: dir, timeoutMs: 300_000 });
  return `compiled (better-sqlite3 ${version(theirs)}; ours is ${version(ours)})`;
}

/** The public API's types as a user's strict TypeScript sees them (skipLibCheck off: the .d.ts too). */
const TYPES_CHECK = `import { createServer, defineSkill, JobError, type SkillContext } from 'taskhandle';
import { z } from 'zod';

const input = z.object({ n: z.number() });
const run = async (ctx: SkillContext<{ n: number }>) => {
  if (ctx.input.n < 0) throw new JobError('negative', 'bad-n');
  await ctx.progress({ percent: 50 });
  return { message: \`n is \${ctx.input.n}\` };
};
const skill = defineSkill({ id: 'typed', description: 'd', input, pollIntervalMs: 100, ttlMs: 1000, onInterrupt: 'fail', run });
const server = await createServer({ port: 0, database: 'sqlite:/tmp/x.db', builtinSkills: false, skills: [skill], env: {} });
export const where: string = server.url;
export const port: number | undefined = server.port;
// @ts-expect-error: port is a number
export const wrong = () => createServer({ port: '41241' });
`;

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    noEmit: true,
    skipLibCheck: false,
    types: ['node'],
  },
  files: ['check.ts'],
};
