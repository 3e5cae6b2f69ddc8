import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually, getTask } from './a2a.js';
import { cli, lines, MAIN, start } from './cli-run.js';
import { type Agent, launch } from './harness.js';

/** An empty directory to run the command in: a command that started a server would make ./data there. */
const emptyDir = (): string => mkdtempSync(join(tmpdir(), 'taskhandle-cwd-'));

describe('taskhandle usage errors', () => {
  // Nothing listens at this URL: a usage error must be found before any request is made.
  const nobody = 'http://127.0.0.1:9';

  it.each([
    [['sevre'], 'taskhandle sevre: unknown command (did you mean serve?)'],
    [['submt', 'export'], 'taskhandle submt: unknown command (did you mean submit?)'],
    [['wacth', 'abc'], 'taskhandle wacth: unknown command (did you mean watch?)'],
    [['frobnicate'], 'taskhandle frobnicate: unknown command; taskhandle help lists the commands'],
    [['get', 'abc', '--jsn'], 'taskhandle get: unknown option --jsn (did you mean --json?)'],
    [
      ['submit', 'export', '--inptu', '{}'],
      'taskhandle submit: unknown option --inptu (did you mean --input?)',
    ],
    [
      ['serve', '--conformnce'],
      'taskhandle serve: unknown option --conformnce (did you mean --conformance?)',
    ],
    [['get', 'abc', '--url'], 'taskhandle get: --url needs a value'],
    [['watch', 'abc', '--json=yes'], 'taskhandle watch: --json takes no value'],
    [['keys', 'rotat'], 'taskhandle keys: unknown subcommand "rotat" (did you mean rotate?)'],
    [['api-keys', 'add', '--principal', 'alice'], 'taskhandle api-keys: --tenant is required'],
    [['help', 'wach'], 'taskhandle help: no command "wach" (did you mean watch?)'],
    [['--conformance'], 'taskhandle: --conformance is an option: put it after a command'],
    [['serve', 'extra'], 'taskhandle serve: unexpected argument "extra"'],
    [['serve', 'PORT=8080'], 'set before the command (PORT=8080 taskhandle serve)'],
  ])('taskhandle %j exits 2 saying what to do, and starts nothing', async (args, said) => {
    const cwd = emptyDir();
    const run = await cli(nobody, args, undefined, cwd);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(said);
    expect(run.stderr).toMatch(/^taskhandle[ :]/);
    expect(run.stderr).not.toMatch(/^\s+at /m); // no stack trace
    expect(run.stdout).toBe('');
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('a bare taskhandle prints the overview on stderr and exits 2, creating nothing where it stands', async () => {
    const cwd = emptyDir();
    const run = await cli(nobody, [], undefined, cwd);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^usage: taskhandle <command>/);
    expect(run.stderr).toContain('taskhandle: give a command (taskhandle serve runs the agent)');
    expect(existsSync(join(cwd, 'data'))).toBe(false);
  });

  it('help, --help and each server command help go to stdout with exit 0', async () => {
    for (const [args, first] of [
      [['help'], 'usage: taskhandle <command>'],
      [['--help'], 'usage: taskhandle <command>'],
      [['help', 'serve'], 'usage: taskhandle serve'],
      [['serve', '--help'], 'usage: taskhandle serve'],
      [['keys', '--help'], 'usage: taskhandle keys rotate'],
      [['api-keys', 'add', '-h'], 'usage: taskhandle api-keys add'],
    ] as const) {
      const run = await cli(nobody, [...args]);
      expect(run).toMatchObject({ code: 0, stderr: '' });
      expect(run.stdout.startsWith(first)).toBe(true);
    }
  });
});

describe('--url at something that is not an A2A agent', () => {
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    await Promise.all(closers.splice(0).map((c) => c()));
  });

  /** A plain web server: HTML on `/`, 404 HTML everywhere else (no agent card). */
  async function webServer(): Promise<string> {
    const server: Server = createServer((req, res) => {
      res.writeHead(req.url === '/' ? 200 : 404, { 'Content-Type': 'text/html' });
      res.end('<!doctype html><title>a web site</title>');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    closers.push(() => new Promise((r) => server.close(r)));
    const address = server.address();
    if (!address || typeof address === 'string') throw new Error('no port');
    return `http://127.0.0.1:${address.port}`;
  }

  it('a web server answering HTML or 404 is named as not an agent (exit 7), for calls and streams', async () => {
    const site = await webServer();
    const got = await cli(site, ['get', 'abc']);
    expect(got.code).toBe(7);
    expect(got.stderr).toContain(`answered HTTP 200 (text/html), not A2A JSON-RPC`);
    expect(got.stderr).toContain(`no A2A agent card at ${site}/.well-known/agent-card.json`);
    expect(got.stderr).toContain('does not point at an A2A agent');

    const watched = await cli(`${site}/a2a`, ['watch', 'abc']);
    expect(watched.code).toBe(7);
    expect(watched.stderr).toContain('answered HTTP 404 (text/html), not A2A JSON-RPC');
  });

  it('another path of this agent gets the JSON-RPC endpoint its card names', async () => {
    const agent = await launch();
    closers.push(() => agent.stop());
    const rest = await cli(`${agent.url}/rest`, ['get', 'abc']);
    expect(rest.code).toBe(7);
    expect(rest.stderr).toContain(
      `its agent card names the JSON-RPC endpoint ${agent.url}/; use --url ${agent.url}/`,
    );
  });
});

describe('Ctrl-C during watch', () => {
  const agents: Agent[] = [];
  afterEach(async () => {
    await Promise.all(agents.splice(0).map((a) => a.stop()));
  });

  it('piped: exits 130 saying the task goes on, and the printed command re-attaches after the last event', async () => {
    const agent = await launch();
    agents.push(agent);
    const id = (await cli(agent, ['submit', 'sleep', '--input', '{"seconds":4}'])).stdout.trim();
    const watch = start(['watch', id], agent.url);
    await eventually(async () => (lines(watch.stdout()).length >= 2 ? true : undefined));
    watch.proc.kill('SIGINT');
    expect(await watch.exited).toBe(130);
    const said = watch.stderr();
    expect(said).toContain(`task ${id} goes on`);
    const again = /Re-attach with: taskhandle (watch .*)$/m.exec(said)?.[1]?.split(' ');
    expect(again?.slice(0, 3)).toEqual(['watch', id, '--last-event-id']);
    expect((await getTask(agent, id)).status.state).not.toBe('TASK_STATE_CANCELED');

    // The printed command picks up where the first watch stopped: nothing twice, on to completion.
    const resumed = await cli(agent, again ?? []);
    expect(resumed.code).toBe(0);
    const before = lines(watch.stdout()).map((l) => JSON.parse(l));
    const after = lines(resumed.stdout).map((l) => JSON.parse(l));
    expect(after.at(-1).statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
    expect(after[0].task).toBeUndefined();
    for (const event of after) expect(before).not.toContainEqual(event);
  });

  it.skipIf(!existsSync('/usr/bin/script'))(
    'on a terminal: ^C ends the progress bar line, then says how to re-attach',
    async () => {
      const agent = await launch();
      agents.push(agent);
      const id = (await cli(agent, ['submit', 'sleep', '--input', '{"seconds":30}'])).stdout.trim();
      await agent.waitForState(id, 'TASK_STATE_WORKING');
      // util-linux `script` gives the command a pseudo-terminal; ^C written to it is the user's Ctrl-C.
      const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(MAIN)} watch ${id}`;
      const term = spawn('/usr/bin/script', ['-qfec', command, '/dev/null'], {
        env: { ...process.env, TASKHANDLE_URL: agent.url, TASKHANDLE_TOKEN: '', COLUMNS: '100' },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let screen = '';
      term.stdout.on('data', (d: Buffer) => {
        screen += d.toString();
      });
      const exited = new Promise<number | null>((r) => term.once('exit', (code) => r(code)));
      await eventually(async () => (screen.includes('working') ? true : undefined));
      term.stdin.write('\x03');
      expect(await exited).toBe(130);
      // The bar is redrawn in place with \r; the interruption ends its line before saying anything.
      const lastBar = screen.lastIndexOf('\r[');
      const message = screen.indexOf('taskhandle watch: stopped watching');
      expect(lastBar).toBeGreaterThan(-1);
      expect(message).toBeGreaterThan(lastBar);
      expect(screen.slice(lastBar + 1, message)).toMatch(/^\[[#.]{20}\][^\r\n]*\r?\n$/);
      expect(screen).toContain(
        `task ${id} goes on (working when last seen). Re-attach with: taskhandle watch ${id}`,
      );
      expect((await getTask(agent, id)).status.state).toBe('TASK_STATE_WORKING');
    },
  );
});
