import type { TaskState } from '../../engine/task.js';
import type { PageChanges } from '../browser/changes.js';

/** Tasks named in one event at most; past it the event says `more` and the page reloads its list. */
const BATCH_TASKS = 100;

/**
 * What the console's stream (browser/changes.ts) tells the page: `changed` with the tasks whose
 * state changed (`{tasks: [{id, state}], more?}`), and on a task's page (`follow`: that task's log
 * as it grows; progress and artifacts change no state) `task` when its log grew.
 */
export const consoleChanges =
  (follow?: (signal: AbortSignal) => AsyncIterable<unknown>) =>
  (nudge: () => void, signal: AbortSignal): PageChanges => {
    const changed = new Map<string, TaskState>();
    let more = false;
    let taskGrew = false;
    if (follow) {
      const items = follow(signal);
      void (async () => {
        try {
          for await (const _ of items) {
            taskGrew = true;
            nudge();
          }
        } catch {
          // The task expired or the stream was released: the status events still come.
        }
      })();
    }
    return {
      heard(taskId, state) {
        if (changed.size < BATCH_TASKS || changed.has(taskId)) changed.set(taskId, state);
        else more = true;
      },
      look() {
        const tasks = [...changed].map(([id, state]) => ({ id, state }));
        const events: [string, unknown][] = [];
        if (tasks.length > 0 || more) events.push(['changed', more ? { tasks, more } : { tasks }]);
        if (taskGrew) events.push(['task', {}]);
        changed.clear();
        more = false;
        taskGrew = false;
        return events;
      },
    };
  };
