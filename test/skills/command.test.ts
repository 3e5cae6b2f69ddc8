import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TaskView } from '../../src/engine/task.js';
import { type CommandSpec, commandSkill, loadCommands } from '../../src/skills/command.js';
import {
  artifactText,
  call,
  harnessEach,
  OWNER,
  submit,
  textOf,
  thrown,
  waitForState,
} from '../engine-harness.js';
import { waitFor } from '../helpers.js';

const node = process.execPath;
const GRACE_MS = 300;

/** A node one-liner as an allow-listed argv; `--` keeps the values after it out of node's options. */
const script = (code: string, ...args: string[]) => [node, '-e', code, '--', ...args];

const COMMANDS: CommandSpec[] = [
  { name: 'hello', argv: script('console.log("to stdout"); console.error("to stderr")') },
  {
    name: 'fail',
    description: 'prints 30 lines and exits 3',
    argv: script('for (let i = 1; i <= 30; i++) console.log("line " + i); process.exit(3)'),
  },
  {
    name: 'argv',
    argv: script(
      'console.log(JSON.stringify(process.argv.slice(1)))',
      '{text}',
      'prefix-{text}',
      '{opt}',
      '{level}',
    ),
    params: {
      text: { pattern: '[a-z ]+', required: true },
      opt: { pattern: '--[a-z]+' },
      level: { pattern: '[0-9]', default: '5' },
    },
  },
  {
    name: 'family',
    description: 'a parent that spawns a sleeping grandchild, prints both pids and waits',
    argv: script(
      `const { spawn } = require('node:child_process');
       const g = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
       console.log(JSON.stringify({ parent: process.pid, grandchild: g.pid }));
       setInterval(() => {}, 1000);`,
    ),
  },
  {
    name: 'stubborn',
    argv: script(
      'process.on("SIGTERM", () => console.log("ignoring SIGTERM")); console.log("ready " + process.pid); setInterval(() => {}, 1000)',
    ),
  },
  { name: 'slow', argv: script('console.log("started"); setInterval(() => {}, 1000)'), timeoutMs: 300 },
  {
    name: 'chatty',
    description: '10,000 lines in 500 bursts: the pipe delivers them in hundreds of reads',
    argv: script(
      'let i = 0; const burst = () => { for (let k = 0; k < 20; k++) console.log("line " + i++); if (i < 10000) setTimeout(burst, 0); }; burst();',
    ),
  },
  { name: 'missing', argv: ['/nonexistent/bin/tool', '--version'] },
];

const { h, dir } = harnessEach(() => ({ skills: [commandSkill(COMMANDS, { killGraceMs: GRACE_MS })] }));

const outputOf = (view: TaskView): Promise<string> => artifactText(h.engine, view.record.id, 'output.log');

const run = (command: string, params?: Record<string, string>) =>
  submit(h.engine, call('command', { command, ...(params ? { params } : {}) }));

/** Waits until the command's output artifact matches `pattern`; returns the match. */
const waitForOutput = (id: string, pattern: RegExp) =>
  waitFor(
    async () => pattern.exec(await outputOf(await h.engine.get(OWNER, id))) ?? undefined,
    () => `output of ${id} to match ${pattern}`,
  );

/**
 * Whether the process still runs. kill(pid, 0) alone also finds zombies, and where PID 1 does not
 * reap orphans (some containers) a killed grandchild stays one: its /proc state says it is dead.
 */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
  } catch {
    return true;
  }
}

describe('command skill', () => {
  it('completes on exit 0 with stdout and stderr in one output.log artifact', async () => {
    h.startRunner();
    const id = await run('hello');
    const done = await waitForState(h.engine, id, 'completed');
    expect(textOf(done.statusMessage)).toBe('hello exited 0');
    const view = await h.engine.get(OWNER, id);
    expect(view.artifacts.map((a) => a.name)).toEqual(['output.log']);
    expect(await outputOf(view)).toContain('to stdout\n');
    expect(await outputOf(view)).toContain('to stderr\n');
    const chunks = (await h.store.readEvents(id, 0, 100)).flatMap((e) =>
      e.event.kind === 'artifact' ? [e.event] : [],
    );
    expect(chunks.at(-1)?.lastChunk).toBe(true);
    expect(chunks.filter((c) => c.lastChunk)).toHaveLength(1);
  });

  it('fails on a non-zero exit with the code and the last 20 lines of output', async () => {
    h.startRunner();
    const id = await run('fail');
    const failed = await waitForState(h.engine, id, 'failed');
    const message = textOf(failed.statusMessage);
    expect(message).toMatch(/^fail exited with code 3:\n/);
    expect(message).toContain('line 11\nline 12');
    expect(message).toMatch(/line 30$/);
    expect(message).not.toMatch(/line 10\n/);
    expect(await outputOf(await h.engine.get(OWNER, id))).toContain('line 1\n');
  });

  it('fails saying so when the executable does not exist', async () => {
    h.startRunner();
    const id = await run('missing');
    const failed = await waitForState(h.engine, id, 'failed');
    expect(textOf(failed.statusMessage)).toBe(
      'missing could not start: "/nonexistent/bin/tool" was not found',
    );
  });
});

describe('what a caller may run', () => {
  /** The error a refused request gets, before any task exists. */
  async function refused(input: unknown): Promise<{ code?: unknown; message?: unknown }> {
    const err = (await thrown(() => submit(h.engine, call('command', input)))) as { code?: unknown };
    expect(err.code).toBe('invalid-params');
    const { views } = await h.engine.list(OWNER, { pageSize: 10, withArtifacts: false });
    expect(views).toEqual([]);
    return err as { code?: unknown; message?: unknown };
  }

  it('refuses a command that is not in the allow-list', async () => {
    const err = await refused({ command: 'rm' });
    expect(err.message).toContain('input.command');
    expect(err.message).toContain('"hello"');
  });

  it('refuses a value that fails its pattern, shell syntax included', async () => {
    const err = await refused({ command: 'argv', params: { text: '; rm -rf /' } });
    expect(err.message).toBe('Invalid input.params.text for skill "command": must match /[a-z ]+/');
    await refused({ command: 'argv', params: { text: 'ok', opt: '$(reboot)' } });
    await refused({ command: 'argv', params: { text: 'line\nbreak' } });
  });

  it('refuses an undeclared param, a missing required one and extra fields', async () => {
    expect((await refused({ command: 'argv', params: { text: 'a', shell: 'x' } })).message).toContain(
      'input.params.shell',
    );
    expect((await refused({ command: 'argv' })).message).toBe(
      'Invalid input.params.text for skill "command": is required',
    );
    expect((await refused({ command: 'hello', argv: ['sh', '-c', 'id'] })).message).toContain('input');
    await refused({ command: 'argv', params: { text: 'a'.repeat(5000) } });
  });

  it('passes a value with spaces as ONE argv element; optional params are left out, defaults used', async () => {
    h.startRunner();
    const id = await run('argv', { text: 'two words' });
    await waitForState(h.engine, id, 'completed');
    const printed = JSON.parse(await outputOf(await h.engine.get(OWNER, id)));
    expect(printed).toEqual(['two words', 'prefix-two words', '5']);

    const again = await run('argv', { text: 'x', opt: '--loud', level: '7' });
    await waitForState(h.engine, again, 'completed');
    expect(JSON.parse(await outputOf(await h.engine.get(OWNER, again)))).toEqual([
      'x',
      'prefix-x',
      '--loud',
      '7',
    ]);
  });
});

describe('stopping a command', () => {
  it('cancel kills the whole process group, grandchild included', async () => {
    h.startRunner();
    const id = await run('family');
    const match = await waitForOutput(id, /\{"parent":\d+,"grandchild":\d+\}/);
    const pids = JSON.parse(match[0]) as { parent: number; grandchild: number };
    expect(running(pids.grandchild)).toBe(true);
    await h.engine.cancel(OWNER, id);
    const canceled = await waitForState(h.engine, id, 'canceled');
    expect(textOf(canceled.statusMessage)).toBe('Canceled by request');
    expect(running(pids.parent)).toBe(false);
    expect(running(pids.grandchild)).toBe(false);
  });

  it('SIGKILLs a command that ignores SIGTERM once the grace period is over', async () => {
    h.startRunner();
    const id = await run('stubborn');
    const pid = Number((await waitForOutput(id, /ready (\d+)/))[1]);
    const asked = Date.now();
    await h.engine.cancel(OWNER, id);
    await waitForState(h.engine, id, 'canceled');
    expect(Date.now() - asked).toBeGreaterThanOrEqual(GRACE_MS - 20);
    expect(running(pid)).toBe(false);
  });

  it('fails a command that runs past its timeoutMs', async () => {
    h.startRunner();
    const id = await run('slow');
    const failed = await waitForState(h.engine, id, 'failed');
    expect(textOf(failed.statusMessage)).toBe('slow timed out after 300 ms:\nstarted');
  });

  it('a shutdown kills the command, and the next runner fails the task rather than re-run it', async () => {
    const first = h.startRunner();
    const id = await run('family');
    const match = await waitForOutput(id, /\{"parent":\d+,"grandchild":\d+\}/);
    const pids = JSON.parse(match[0]) as { parent: number; grandchild: number };
    await first.stop(0);
    expect(running(pids.parent)).toBe(false);
    expect(running(pids.grandchild)).toBe(false);
    h.startRunner();
    const failed = await waitForState(h.engine, id, 'failed');
    expect(textOf(failed.statusMessage)).toBe(
      'Interrupted by a restart; this skill is not re-run automatically',
    );
  });
});

describe('output', () => {
  it('batches a chatty command: 10,000 lines in a handful of artifact events', async () => {
    h.startRunner();
    const id = await run('chatty');
    await waitForState(h.engine, id, 'completed');
    const lines = (await outputOf(await h.engine.get(OWNER, id))).split('\n');
    expect(lines).toHaveLength(10_001);
    expect(lines[9999]).toBe('line 9999');
    const events = await h.store.readEvents(id, 0, 10_000);
    const chunks = events.filter((e) => e.event.kind === 'artifact');
    expect(chunks.length).toBeGreaterThan(0);
    expect(chunks.length).toBeLessThan(20);
  });
});

describe('loadCommands', () => {
  const write = (content: string) => {
    const file = join(dir(), 'commands.json');
    writeFileSync(file, content);
    return file;
  };

  it('reads a valid file', () => {
    const file = write(
      JSON.stringify([
        { name: 'build', argv: ['make', '{target}'], params: { target: { pattern: '[a-z]+' } } },
      ]),
    );
    expect(loadCommands(file)).toEqual([
      {
        name: 'build',
        argv: ['make', '{target}'],
        params: { target: { pattern: '[a-z]+', required: false } },
        env: {},
        inheritEnv: false,
      },
    ]);
  });

  it('rejects a malformed file naming the file, the entry and the field', () => {
    const ok = { name: 'ok', argv: ['true'] };
    const cases: [unknown, string][] = [
      [
        [ok, { name: 'bad', argv: ['x'], params: { v: { pattern: '(' } } }],
        'entry 1 ("bad"), params.v.pattern',
      ],
      [[ok, { name: 'ok', argv: ['y'] }], 'entry 1 ("ok"), name: "ok" is defined twice'],
      [[{ name: 'exe', argv: ['{p}'], params: { p: { pattern: '.*' } } }], 'entry 0 ("exe"), argv.0'],
      [[{ name: 'nope', argv: [] }], 'entry 0 ("nope"), argv'],
      [[{ name: 'x', argv: ['y'], shell: true }], 'entry 0 ("x")'],
      [
        [{ name: 'd', argv: ['y'], params: { n: { pattern: '[0-9]+', default: 'ten' } } }],
        'entry 0 ("d"), params.n.default: must match the pattern',
      ],
      [{ name: 'not-an-array' }, ''],
    ];
    for (const [content, where] of cases) {
      const file = write(JSON.stringify(content));
      expect(() => loadCommands(file)).toThrow(`${file}:${where ? ` ${where}` : ''}`);
    }
    const broken = write('[{"name": ');
    expect(() => loadCommands(broken)).toThrow(`${broken}: cannot read the commands file`);
    expect(() => loadCommands('/nonexistent/commands.json')).toThrow('/nonexistent/commands.json');
  });

  it('commandSkill refuses an empty allow-list', () => {
    expect(() => commandSkill([])).toThrow('empty');
  });
});
