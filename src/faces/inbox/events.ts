import type { PageChanges } from '../browser/changes.js';

/**
 * What the inbox's stream (browser/changes.ts) tells the page: `changed` (with the time as data)
 * whenever the caller's waiting tasks change. `snapshot` is a key of what the caller sees now (its
 * waiting tasks and their times): an event is sent only when it differs, so that no caller learns
 * of other callers' tasks changing. The first look only sets the baseline (the page fetches its
 * list itself once connected); the stream looks at each keep-alive too (changes made by another
 * instance).
 */
export const waitingChanges = (snapshot: () => Promise<string>) => (): PageChanges => {
  let last: string | undefined;
  return {
    async look() {
      const now = await snapshot();
      const changed = last !== undefined && now !== last;
      last = now;
      return changed ? [['changed', { at: Date.now() }]] : [];
    },
  };
};
