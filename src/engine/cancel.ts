import { agentText, type EngineContext } from './context.js';
import { EngineError } from './errors.js';
import { generationMismatch } from './generation.js';
import { get, record } from './reads.js';
import { waitUntil } from './streams.js';
import { isTerminal, type TaskView } from './task.js';

/**
 * Cancels a task. A queued or interrupted task is canceled at once. A working one has its job's
 * signal aborted; the job gets `cancelGraceMs` to stop, then the task is marked canceled whatever
 * the job does (its later writes are refused by the state guard).
 *
 * With `ifGeneration`, the cancel applies only while the task's generation (its log's `lastSeq`)
 * is still that one: the condition is part of the write that cancels (or of the one that asks the
 * job to stop), never a read before it, and a stale one is refused (`task-generation-mismatch`)
 * before anything else is said of the task, as HTTP evaluates a precondition first (RFC 9110
 * section 13.2.2). The grace period that follows an accepted request is not conditional: the job's
 * own last writes move the generation, and the cancel the caller asked for still happens.
 */
export async function cancel(
  core: EngineContext,
  owner: string,
  id: string,
  ifGeneration?: number,
): Promise<TaskView> {
  const { journal } = core;
  for (;;) {
    const found = await record(core, owner, id);
    if (ifGeneration !== undefined && found.lastSeq !== ifGeneration) {
      throw generationMismatch(id, ifGeneration, found.lastSeq);
    }
    if (isTerminal(found.state)) {
      throw new EngineError('task-not-cancelable', `Task ${id} is ${found.state} and cannot be canceled`);
    }
    if (found.state !== 'working') {
      const result = await journal.commit({
        taskId: id,
        from: [found.state],
        to: 'canceled',
        statusMessage: agentText(id, found.contextId, 'Canceled by request'),
        generation: ifGeneration,
        events: [],
        at: journal.now(),
      });
      if (result) {
        journal.observer.canceled(found.skill, 'at-once');
        return get(core, owner, id);
      }
      continue; // claimed or answered meanwhile (a condition is checked again on the next read)
    }
    // Unconditional, it marks whatever the task is; conditional, only the generation read above.
    if (!(await journal.store.requestCancel(id, ifGeneration)) && ifGeneration !== undefined) continue;
    journal.cancelRequested(id);
    const after = await waitUntil(core, id, isTerminal, core.cancelGraceMs);
    if (isTerminal(after.state)) journal.observer.canceled(found.skill, 'in-grace');
    else {
      const forced = await journal.commit({
        taskId: id,
        from: ['working', 'submitted', 'input-required', 'auth-required'],
        to: 'canceled',
        statusMessage: agentText(id, found.contextId, 'Canceled by request (the job did not stop in time)'),
        releaseLease: true,
        events: [],
        at: journal.now(),
      });
      if (forced) journal.observer.canceled(found.skill, 'forced');
    }
    return get(core, owner, id);
  }
}

/**
 * Fails the tasks whose wait for input passed its deadline (the runner calls this on its timer).
 * Guarded like any transition: an answer that came first wins.
 */
export async function failOverdueInputs(core: EngineContext, limit: number): Promise<number> {
  const { journal } = core;
  const overdue = await journal.store.overdueInputs(journal.now(), limit);
  for (const r of overdue) {
    await journal.commit({
      taskId: r.id,
      from: ['input-required'],
      to: 'failed',
      statusMessage: agentText(r.id, r.contextId, 'No answer came before the deadline'),
      events: [],
      at: journal.now(),
    });
  }
  return overdue.length;
}
