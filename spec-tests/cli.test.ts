import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { artifactText, CSV_HEADER, csvLines, eventually, getTask, rpcStream, V1 } from './a2a.js';
import { cli, lines, start } from './cli-run.js';
import { type Agent, freePort, launch, tempDbPath } from './harness.js';

describe('taskhandle client commands', () => {
  const agents: Agent[] = [];
  const up = async (o: Parameters<typeof launch>[0] = {}) => {
    const agent = await launch(o);
    agents.push(agent);
    return agent;
  };
  afterEach(async () => {
    await Promise.all(agents.splice(0).map((a) => a.stop()));
  });

  it('submit prints the id; get shows it; result -o writes the CSV bytes GetTask holds', async () => {
    const agent = await up();
    const sub = await cli(agent, ['submit', 'export', '--input', '{"rows":25,"chunkRows":5}']);
    expect(sub.code).toBe(0);
    const id = sub.stdout.trim();
    expect(id).toMatch(/^[0-9a-f]{20,}$/);
    const done = await agent.waitForState(id, 'TASK_STATE_COMPLETED');

    const shown = await cli(agent, ['get', id]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/^state\s+completed$/m);
    expect(shown.stdout).toContain('export.csv');
    const raw = await cli(agent, ['get', id, '--json']);
    expect(JSON.parse(raw.stdout)).toEqual(await getTask(agent, id));

    const file = join(tempDbPath(), '..', 'out.csv');
    const result = await cli(agent, ['result', id, '-o', file]);
    expect(result.code).toBe(0);
    const bytes = readFileSync(file, 'utf8');
    expect(bytes).toBe(artifactText(done.artifacts[0]));
    expect(csvLines(bytes)[0]).toBe(CSV_HEADER);
    expect(csvLines(bytes)).toHaveLength(26);
    expect((await cli(agent, ['result', id])).stdout).toBe(bytes);
  });

  it('result downloads a large export the agent links, with the caller credentials, to a file or stdout', async () => {
    const agent = await up({ apiKeys: { alice: 'acme' } });
    const id = (await cli(agent, ['submit', 'export', '--input', '{"rows":20000}'])).stdout.trim();
    const done = await agent.waitForState(id, 'TASK_STATE_COMPLETED');
    const [part] = done.artifacts[0].parts;
    expect(part.url).toBeDefined();
    const file = join(tempDbPath(), '..', 'big.csv');
    expect((await cli(agent, ['result', id, '-o', file])).code).toBe(0);
    const bytes = readFileSync(file);
    expect(bytes.length).toBe(part.metadata['taskhandle.bytes']);
    expect(csvLines(bytes.toString())).toHaveLength(20_001);
    expect((await cli(agent, ['result', id])).stdout).toBe(bytes.toString());
  });

  it('the same --message-id twice is the same task (a safe retry)', async () => {
    const agent = await up();
    const args = ['submit', 'sleep', '--input', '{"seconds":0.1}', '--message-id', 'cli-retry-1'];
    const [a, b] = [await cli(agent, args), await cli(agent, args)];
    expect(a.code).toBe(0);
    expect(b.stdout).toBe(a.stdout);
  });

  it('--wait exits 0 when completed, 6 when input is required, 1 when canceled', async () => {
    const agent = await up();
    const ok = await cli(agent, ['submit', 'export', '--input', '{"rows":3}', '--wait', '--json']);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout).status.state).toBe('TASK_STATE_COMPLETED');

    const approval = await cli(agent, ['submit', 'approval', '--input', '{"action":"Ship it"}', '--wait']);
    expect(approval.code).toBe(6);
    expect(approval.stderr).toContain('input-required');

    const waiting = start(['submit', 'sleep', '--input', '{"seconds":30}', '--wait'], agent.url);
    const id = await eventually(async () => lines(waiting.stdout())[0]);
    await agent.waitForState(id, 'TASK_STATE_WORKING');
    const canceled = await cli(agent, ['cancel', id]);
    expect(canceled).toMatchObject({ code: 0, stdout: `${id} canceled\n` });
    expect(await waiting.exited).toBe(1);
    expect(waiting.stderr()).toContain('canceled');
    // An ended task's result is no result: exit 1 too.
    expect((await cli(agent, ['result', id])).code).toBe(1);
    // ... and it cannot be canceled again: the agent refuses (7).
    expect((await cli(agent, ['cancel', id])).code).toBe(7);
  });

  it('list shows the caller own tasks (API key as a bearer token); a wrong token exits 4', async () => {
    const agent = await up({ apiKeys: { alice: 'acme', bob: 'acme' } });
    // One after the other, so that b's last activity is surely the newer one (the list's order).
    const a = (await cli(agent, ['submit', 'sleep', '--input', '{"seconds":0.1}'])).stdout.trim();
    await agent.waitForState(a, 'TASK_STATE_COMPLETED');
    const b = (await cli(agent, ['submit', 'export', '--input', '{"rows":2}'])).stdout.trim();
    await agent.waitForState(b, 'TASK_STATE_COMPLETED');

    const listed = await cli(agent, ['list']);
    expect(listed.code).toBe(0);
    expect(lines(listed.stdout).map((l) => l.split(/\s+/)[0])).toEqual([b, a]);
    const paged = await cli(agent, ['list', '--page-size', '1', '--json']);
    const page = JSON.parse(paged.stdout);
    expect(page.tasks.map((t: { id: string }) => t.id)).toEqual([b]);
    expect(page.nextPageToken).not.toBe('');
    const filtered = await cli(agent, ['list', '--state', 'working']);
    expect(filtered).toMatchObject({ code: 0, stdout: '' });
    // Bob sees none of Alice's tasks, and cannot read one.
    const bob = agent.keys.bob as string;
    expect((await cli(agent, ['list'], bob)).stdout).toBe('');
    expect((await cli(agent, ['get', a], bob)).code).toBe(3);

    const wrong = await cli(agent, ['get', a], 'th_not-a-key');
    expect(wrong.code).toBe(4);
    expect(wrong.stderr).toContain('401');
    expect((await cli(agent.url, ['list'])).code).toBe(4);
  });

  it('not found exits 3, connection refused 5, bad usage 2; every command has help', async () => {
    const agent = await up();
    const missing = await cli(agent, ['get', 'no-such-task']);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain('not found');
    expect((await cli(agent, ['watch', 'no-such-task'])).code).toBe(3);

    const nobody = `http://127.0.0.1:${await freePort()}`;
    const refused = await cli(nobody, ['get', 'x']);
    expect(refused.code).toBe(5);
    expect(refused.stderr).toContain('ECONNREFUSED');
    expect((await cli(nobody, ['watch', 'x', '--retry-for', '0'])).code).toBe(5);

    expect((await cli(agent, ['submit', 'export', '--input', 'not json'])).code).toBe(2);
    expect((await cli(agent, ['submit'])).code).toBe(2);
    expect((await cli(agent, ['get'])).code).toBe(2);
    expect((await cli(agent, ['get', 'x', '--bogus'])).code).toBe(2);

    const overview = await cli(agent, ['help']);
    expect(overview.code).toBe(0);
    for (const command of ['submit', 'get', 'watch', 'cancel', 'result', 'list']) {
      expect(overview.stdout).toContain(`  ${command}`);
      const help = await cli(agent, [command, '--help']);
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(new RegExp(`^usage: taskhandle ${command}`));
      expect(help.stdout).toContain('exit codes');
    }
  });

  it('watch, piped, prints NDJSON to completion and survives a server restart in the middle', async () => {
    const dbPath = tempDbPath();
    const port = String(await freePort());
    // A short shutdown deadline: the stop interrupts the export rather than wait for its end.
    const env = { PORT: port, LEASE_MS: '1000', RUNNER_POLL_MS: '100', SHUTDOWN_TIMEOUT_MS: '300' };
    const first = await up({ dbPath, env });
    const id = (
      await cli(first, ['submit', 'export', '--input', '{"rows":40,"chunkRows":1,"delayMs":100}'])
    ).stdout.trim();
    const watch = start(['watch', id], first.url);
    await eventually(async () => (lines(watch.stdout()).length >= 4 ? true : undefined));
    await first.stop();
    const second = await up({ dbPath, env });
    expect(second.url).toBe(first.url);

    expect(await watch.exited).toBe(0);
    expect(watch.stderr()).toContain('reconnecting');
    const events = lines(watch.stdout()).map((l) => JSON.parse(l));
    expect(events[0].task.id).toBe(id);
    expect(events.at(-1).statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
    // In order, nothing lost, nothing twice: after the first snapshot, the watcher printed exactly
    // the tail of the task's event log.
    const log = await (
      await rpcStream(second, 'SubscribeToTask', { id }, { ...V1, lastEventId: '0' })
    ).rest();
    const tail = log.slice(log.length - (events.length - 1)).map((e) => e.data.result);
    expect(events.slice(1)).toEqual(tail);
    const done = await getTask(second, id);
    expect(csvLines(artifactText(done.artifacts[0]))).toHaveLength(41);
    // The restart came mid-export: the watcher saw the new process take the job over.
    const texts = events.map((e) => e.statusUpdate?.status.message?.parts?.[0]?.text);
    expect(texts).toContain('Interrupted by a restart; running again');
  });

  it('submit --wait keeps polling through a server restart and exits 0 when the task completes', async () => {
    const dbPath = tempDbPath();
    const env = {
      PORT: String(await freePort()),
      LEASE_MS: '1000',
      RUNNER_POLL_MS: '100',
      SHUTDOWN_TIMEOUT_MS: '300',
    };
    const first = await up({ dbPath, env });
    const waiting = start(['submit', 'sleep', '--input', '{"seconds":2}', '--wait'], first.url);
    const id = await eventually(async () => lines(waiting.stdout())[0]);
    await first.waitForState(id, 'TASK_STATE_WORKING');
    await first.stop();
    const second = await up({ dbPath, env });
    expect(await waiting.exited).toBe(0);
    expect((await getTask(second, id)).status.state).toBe('TASK_STATE_COMPLETED');
  });
});
