import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isCode, sampleSource } from './doc-samples.js';
import { assertBuilt, ROOT } from './package-project.js';
import { type Block, codeBlocks, commands, matchesShown, withoutComment } from './readme-blocks.js';
import { interrupt } from './sample-run.js';
import { listeningUrl, ServedSet, serve, userEnv } from './served.js';

/**
 * The README as a newcomer follows it: its JavaScript is the example files byte for byte, those
 * type-check and run, and its shell blocks, pasted as printed, answer what it shows. The only change
 * to a pasted command is the port: each server here listens on a free one (PORT=0), so
 * `http://127.0.0.1:41241` becomes that server's address.
 */

const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const BLOCKS = codeBlocks(README);
const QUICKSTART = join(ROOT, 'examples/quickstart');
const MAIN = join(ROOT, 'dist/src/main.js');
const PRINTED_URL = 'http://127.0.0.1:41241';

/** Shell commands the README gives that the test does in its own way, and how. */
const SETUP: Record<string, string> = {
  'npm install': 'the tests run in the repository, installed',
  'npm start': '`node dist/src/main.js serve`: what npm start runs after its build',
  'npm install taskhandle zod':
    'examples/quickstart/ imports taskhandle by name from the repository itself, and zod from its node_modules',
  'npm test': "CI's command: checked against .ci/run below",
};

/** Each section with commands to run, and the server (set up in beforeAll) they run against. */
const SECTIONS = {
  'Run the server': 'node dist/src/main.js serve',
  'Your own skill': 'node server.mjs',
  'Work that runs elsewhere': 'npx taskhandle serve --skills ./remote-skills.mjs, and node worker.mjs',
} as const;
type Section = keyof typeof SECTIONS;

const runnable = (b: Block) => b.lang === 'sh' && commands(b.text).some((c) => /\bcurl\b/.test(c.text));

const execFileP = promisify(execFile);

/** Runs a section's shell blocks in one bash, as a reader pastes them into one shell. */
async function paste(section: Section, url: string): Promise<{ shown: string[]; printed: string[] }[]> {
  const cmds = BLOCKS.filter((b) => b.section === section && runnable(b)).flatMap((b) => commands(b.text));
  if (cmds.length === 0) throw new Error(`the README's "${section}" section has no curl commands any more`);
  const END = '@@@ end of command @@@';
  const script = cmds.map((c) => `${c.text.replaceAll(PRINTED_URL, url)}\nprintf '\\n%s\\n' '${END}'`);
  const { stdout, stderr } = await execFileP('bash', ['-c', script.join('\n')], {
    cwd: ROOT,
    timeout: 60_000,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
  });
  expect(stderr).toBe('');
  const chunks = stdout.split(`\n${END}\n`);
  return cmds.map((c, i) => ({
    shown: c.output,
    printed: (chunks[i] ?? '').split('\n').filter((l) => l.trim() !== ''),
  }));
}

function expectAsShown(results: { shown: string[]; printed: string[] }[]): void {
  for (const { shown, printed } of results) {
    const says = `printed:\n${printed.join('\n')}\nthe README shows:\n${shown.join('\n')}`;
    expect(printed.length, says).toBe(shown.length);
    for (const [i, line] of shown.entries()) expect(matchesShown(printed[i] ?? '', line), says).toBe(true);
  }
}

describe('the README, as printed', () => {
  describe('its code blocks', () => {
    // The docs' samples, and the type-check of every example: doc-samples.test.ts.
    it('every JavaScript block is an example file, byte for byte', () => {
      const js = BLOCKS.filter(isCode);
      expect(js.length).toBeGreaterThanOrEqual(4);
      for (const b of js) {
        expect(b.example, `a README block has no example marker:\n${b.text}`).toBeDefined();
        const marked = b.example ?? '';
        expect(b.text, `the README's block marked ${marked} differs from the file`).toBe(
          sampleSource(marked),
        );
      }
    });

    it('every shell block either runs here or is a setup step this test stands in for', () => {
      for (const b of BLOCKS.filter((x) => x.lang === 'sh')) {
        if (runnable(b)) {
          expect(Object.keys(SECTIONS), `a shell block with curl under "${b.section}"`).toContain(b.section);
          continue;
        }
        for (const c of commands(b.text)) {
          const command = withoutComment(c.text);
          expect(
            SETUP[command],
            `"${command}" (under "${b.section}"): teach readme.test.ts to run it`,
          ).toBeDefined();
        }
      }
    });

    it('the test command it gives is the one CI runs, and npm test is defined', () => {
      const given = BLOCKS.filter((b) => b.lang === 'sh')
        .flatMap((b) => commands(b.text))
        .map((c) => withoutComment(c.text))
        .filter((c) => c.startsWith('npm test'));
      expect(given).toEqual(['npm test']);
      const ci = readFileSync(join(ROOT, '.ci/run'), 'utf8').split('\n');
      expect(ci).toContain('npm test');
      const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
        scripts: Record<string, string>;
      };
      expect(pkg.scripts.test).toContain('vitest run');
    });

    it('the commands it names in its text are the ones run here', () => {
      for (const named of [
        '`node server.mjs`',
        '`npx taskhandle serve --skills ./remote-skills.mjs`',
        '`node worker.mjs`',
        '`skills.mjs`:',
        '`server.mjs`:',
        '(`remote-skills.mjs`)',
      ])
        expect(README).toContain(named);
    });
  });

  describe('its quick starts, against real servers', () => {
    let dir = '';
    const servers = new ServedSet();
    let worker: ChildProcess | undefined;
    let workerOutput = '';
    const url = (s: Section) => servers.get(SECTIONS[s]).url;

    beforeAll(async () => {
      assertBuilt();
      dir = mkdtempSync(join(tmpdir(), 'taskhandle-readme-'));
      const env = (db: string) => userEnv(dir, db);
      const urlOf = listeningUrl;
      const { keep } = servers;
      await Promise.all([
        serve(process.execPath, [MAIN, 'serve'], { cwd: ROOT, env: env('binary.db'), urlOf }).then(
          keep(SECTIONS['Run the server']),
        ),
        serve(process.execPath, ['server.mjs'], { cwd: QUICKSTART, env: env('library.db'), urlOf }).then(
          keep(SECTIONS['Your own skill']),
        ),
        // What `npx taskhandle` runs in a project that installed the package: its bin, dist/src/main.js.
        serve(process.execPath, [MAIN, 'serve', '--skills', './remote-skills.mjs'], {
          cwd: QUICKSTART,
          env: env('remote.db'),
          urlOf,
        }).then(keep(SECTIONS['Work that runs elsewhere'])),
      ]);
      worker = spawn(process.execPath, ['worker.mjs'], {
        cwd: QUICKSTART,
        env: { PATH: process.env.PATH ?? '', TASKHANDLE_URL: url('Work that runs elsewhere') },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      for (const s of [worker.stdout, worker.stderr]) s?.on('data', (d: Buffer) => (workerOutput += d));
    }, 60_000);

    afterAll(async () => {
      if (worker) await interrupt(worker);
      await servers.stopAll();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('Run the server: a sleep job is created, polled working, then completed', async () => {
      expectAsShown(await paste('Run the server', url('Run the server')));
    }, 60_000);

    it('Your own skill: node server.mjs prints what the README says', async () => {
      const printed = /`node server\.mjs` prints `([^`]+)`/.exec(README)?.[1];
      if (!printed) throw new Error('the README no longer says what node server.mjs prints');
      const served = servers.get(SECTIONS['Your own skill']);
      const expected = printed.replace(PRINTED_URL, served.url);
      const deadline = Date.now() + 10_000;
      while (!served.output().split('\n').includes(expected) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(served.output().split('\n')).toContain(expected);
    });

    it('Your own skill: the countdown runs and its note is collected', async () => {
      expectAsShown(await paste('Your own skill', url('Your own skill')));
    }, 60_000);

    it('Work that runs elsewhere: the worker completes the resize job', async () => {
      expectAsShown(await paste('Work that runs elsewhere', url('Work that runs elsewhere')));
    }, 60_000);

    it('server.mjs and worker.mjs stop on Ctrl-C (SIGINT) and exit 0', async () => {
      const library = servers.get(SECTIONS['Your own skill']);
      expect(await interrupt(library.proc), library.output()).toBe(0);
      expect(await interrupt(worker as ChildProcess), workerOutput).toBe(0);
    });
  });
});
