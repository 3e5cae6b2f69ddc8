import { afterEach, describe, expect, it } from 'vitest';
import {
  artifactText,
  CSV_HEADER,
  csvLines,
  eventually,
  getTask,
  rpcStream,
  send,
  skillMessage,
  startTask,
  V1,
} from './a2a.js';
import { type Agent, launch, tempDbPath } from './harness.js';
import type { SseEvent } from './sse.js';

/** Short leases and polls so that a dead runner's task is taken over quickly. */
const FAST = { LEASE_MS: '1000', RUNNER_POLL_MS: '100' };
const RERUN = 'Interrupted by a restart; running again';

/** Rebuilds a streamed artifact from a task snapshot and artifact updates (append, or replace). */
function assemble(events: SseEvent[]): string {
  let parts: unknown[] = [];
  for (const e of events) {
    const r = e.data.result;
    if (r.task) parts = r.task.artifacts?.[0]?.parts ?? [];
    if (r.artifactUpdate)
      parts = [...(r.artifactUpdate.append ? parts : []), ...r.artifactUpdate.artifact.parts];
  }
  return artifactText({ parts });
}

describe('restart safety', () => {
  const agents: Agent[] = [];
  const start = async (dbPath: string, env: Record<string, string> = {}) => {
    // As a principal (the same owner at every start): ListTasks needs an identity.
    const agent = await launch({ dbPath, apiKeys: { alice: 'acme' }, env: { ...FAST, ...env } });
    agents.push(agent);
    return agent;
  };
  afterEach(async () => {
    await Promise.all(agents.splice(0).map((a) => a.stop()));
  });

  const texts = (task: { history?: { messageId: string; parts: { text?: string }[] }[] }) =>
    (task.history ?? []).map((m) => m.parts.map((p) => p.text ?? '').join(''));

  it('kill -9 mid-export: tasks, events and artifacts survive; the export is re-run to completion', async () => {
    const dbPath = tempDbPath();
    const first = await start(dbPath);
    const { task: finished } = await send(first, skillMessage('export', { rows: 3 }));
    const finishedBefore = await getTask(first, finished.id);
    const replayBefore = await (
      await rpcStream(first, 'SubscribeToTask', { id: finished.id }, { ...V1, lastEventId: '0' })
    ).rest();

    const running = await startTask(first, skillMessage('export', { rows: 20, chunkRows: 1, delayMs: 100 }));
    const watcher = await rpcStream(first, 'SubscribeToTask', { id: running.id }, V1);
    const watched = [await watcher.next(), await watcher.next(), await watcher.next()] as SseEvent[];
    const partial = await eventually(async () => {
      const t = await getTask(first, running.id);
      return (t.artifacts?.[0]?.parts.length ?? 0) >= 3 ? t : undefined;
    });
    await first.kill9();

    const second = await start(dbPath);
    // The watcher reconnects to the new process with Last-Event-ID (read below, once it ends).
    const lastId = watched.at(-1)?.id as string;
    const resumed = await rpcStream(
      second,
      'SubscribeToTask',
      { id: running.id },
      { ...V1, lastEventId: lastId },
    );
    // Everything written before the crash is there at once, before any takeover.
    expect(await getTask(second, finished.id)).toEqual(finishedBefore);
    const replayAfter = await (
      await rpcStream(second, 'SubscribeToTask', { id: finished.id }, { ...V1, lastEventId: '0' })
    ).rest();
    expect(replayAfter).toEqual(replayBefore);
    expect((await getTask(second, running.id)).status.state).toBe('TASK_STATE_WORKING');

    // The log of the interrupted task is replayed whole: the pre-crash events as the watcher saw them,
    // then the takeover, then the re-run.
    const log = await (
      await rpcStream(second, 'SubscribeToTask', { id: running.id }, { ...V1, lastEventId: '0' })
    ).rest(30_000);
    for (const seen of watched.slice(1)) expect(log.find((e) => e.id === seen.id)).toEqual(seen);
    const takeover = log.findIndex(
      (e) => e.data.result.statusUpdate?.status.message?.parts[0]?.text === RERUN,
    );
    expect(takeover).toBeGreaterThan(0);
    const chunksBefore = log.slice(0, takeover).filter((e) => e.data.result.artifactUpdate);
    expect(chunksBefore.length).toBeGreaterThanOrEqual(partial.artifacts[0].parts.length);

    // ... and follows the re-run to its end, missing nothing, seeing nothing twice.
    const replayed = await resumed.rest(30_000);
    const seqs = [...watched, ...replayed].map((e) => Number(e.id));
    expect(seqs.every((n, i) => i === 0 || n > (seqs[i - 1] ?? 0))).toBe(true);
    expect(Number(replayed[0]?.id)).toBe(Number(lastId) + 1);

    // The re-run wrote the whole file again: every row exactly once.
    const done = await second.waitForState(running.id, 'TASK_STATE_COMPLETED', 20_000);
    expect(replayed.at(-1)?.data.result.statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
    // A client applying the artifact updates as the spec says (append or replace) ends with the stored file.
    expect(assemble([...watched, ...replayed])).toBe(artifactText(done.artifacts[0]));
    const lines = csvLines(artifactText(done.artifacts[0]));
    expect(lines).toHaveLength(21);
    expect(lines[0]).toBe(CSV_HEADER);
    expect(lines.slice(1).map((l) => Number(l.split(',')[0]))).toEqual(
      Array.from({ length: 20 }, (_, i) => i + 1),
    );
    expect(texts(done)).toContain(RERUN);
    expect(done.status.message.parts).toEqual([{ text: 'Exported 20 rows to export.csv' }]);
  });

  it('kill -9 with a sleep running and one queued: both complete after the restart', async () => {
    const dbPath = tempDbPath();
    const first = await start(dbPath, { RUNNER_CONCURRENCY: '1' });
    const a = await startTask(first, skillMessage('sleep', { seconds: 1.5 }));
    await first.waitForState(a.id, 'TASK_STATE_WORKING');
    const b = await startTask(first, skillMessage('sleep', { seconds: 0.2 }));
    expect((await getTask(first, b.id)).status.state).toBe('TASK_STATE_SUBMITTED');
    await first.kill9();

    const second = await start(dbPath);
    expect((await getTask(second, a.id)).status.state).toBe('TASK_STATE_WORKING');
    const [doneA, doneB] = await Promise.all([
      second.waitForState(a.id, 'TASK_STATE_COMPLETED', 20_000),
      second.waitForState(b.id, 'TASK_STATE_COMPLETED', 20_000),
    ]);
    expect(doneA.status.message.parts).toEqual([{ text: 'Slept 1.5 s' }]);
    expect(texts(doneA)).toContain(RERUN);
    expect(texts(doneB)).not.toContain(RERUN);
    const { body } = await second.rpc('ListTasks', { status: 'TASK_STATE_WORKING' }, V1);
    expect(body.result.tasks).toEqual([]);
  });

  it('SIGTERM mid-job exits 0 within the shutdown deadline; the next start takes the job over', async () => {
    const dbPath = tempDbPath();
    const shutdownMs = 300;
    const first = await start(dbPath, { SHUTDOWN_TIMEOUT_MS: String(shutdownMs) });
    const task = await startTask(first, skillMessage('sleep', { seconds: 30 }));
    await first.waitForState(task.id, 'TASK_STATE_WORKING');
    // An open stream does not hold the shutdown: the server ends it (the client resumes elsewhere).
    const watcher = await rpcStream(first, 'SubscribeToTask', { id: task.id }, V1);
    expect((await watcher.next())?.data.result.task.id).toBe(task.id);
    // A hang guard, not a performance check: the deadline, the abort grace and a wide margin.
    const code = await Promise.race([
      first.stop(),
      new Promise((r) => setTimeout(r, shutdownMs + 2000 + 8000, 'still running')),
    ]);
    expect(code).toBe(0);
    await watcher.rest().catch(() => []);

    const second = await start(dbPath);
    const resumed = await eventually(async () => {
      const t = await getTask(second, task.id);
      return t.status.message?.parts?.[0]?.text === RERUN ? t : undefined;
    });
    expect(resumed.status.state).toBe('TASK_STATE_WORKING');
    const canceled = await second.rpc('CancelTask', { id: task.id }, V1);
    expect(canceled.body.result.status.state).toBe('TASK_STATE_CANCELED');
  });

  it('SIGTERM answers a waiting blocking send with the task as it stands, then exits', async () => {
    const first = await start(tempDbPath(), { SHUTDOWN_TIMEOUT_MS: '300' });
    const waiting = first.rpc('SendMessage', { message: skillMessage('sleep', { seconds: 30 }) }, V1);
    const id = await eventually(async () => {
      const { body } = await first.rpc('ListTasks', { status: 'TASK_STATE_WORKING' }, V1);
      return body.result.tasks[0]?.id as string | undefined;
    });
    const stopped = first.stop();
    const { status, body } = await waiting;
    expect(status).toBe(200);
    expect(body.result.task).toMatchObject({ id, status: { state: 'TASK_STATE_WORKING' } });
    expect(await stopped).toBe(0);
  });

  it('SIGTERM lets a job that finishes within the deadline complete before exiting', async () => {
    const dbPath = tempDbPath();
    const first = await start(dbPath, { SHUTDOWN_TIMEOUT_MS: '10000' });
    const task = await startTask(first, skillMessage('sleep', { seconds: 1 }));
    await first.waitForState(task.id, 'TASK_STATE_WORKING');
    expect(await first.stop()).toBe(0);

    const second = await start(dbPath);
    const after = await getTask(second, task.id);
    expect(after.status.state).toBe('TASK_STATE_COMPLETED');
    expect(texts(after)).not.toContain(RERUN);
  });
});
