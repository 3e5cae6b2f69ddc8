import { createHash } from 'node:crypto';

/**
 * Where a `subscriptions/listen` stream stands, carried in each of its SSE event ids so that any
 * instance can go on from there: a digest of the task ids asked for (in the order asked, without
 * repeats) and, for each, the position in its task's log up to which the client has its state
 * (`-`: none sent yet). No session or store row holds it.
 *
 * 2026-07-28 itself does not resume streams ("Resumable SSE streams via Last-Event-ID are not
 * supported": its clients listen again, and get each task's state anew). A client that sends its
 * last event id back, as `Last-Event-ID` on the same listen request, gets only what changed after
 * it instead: a taskhandle addition, as the A2A and 2025-11-25 streams resume.
 */
export type Positions = (number | undefined)[];

const PREFIX = 'tl1';
const ID = /^tl1\.([A-Za-z0-9_-]{11})((?:\.(?:\d{1,15}|-))+)$/;

/** The digest naming a list of task ids: a resume must ask for the same list. */
const digestOf = (taskIds: readonly string[]): string =>
  createHash('sha256').update(JSON.stringify(taskIds)).digest('base64url').slice(0, 11);

export const listenEventId = (taskIds: readonly string[], at: Positions): string =>
  `${PREFIX}.${digestOf(taskIds)}${at.map((p) => `.${p ?? '-'}`).join('')}`;

/**
 * The positions a `Last-Event-ID` names for this list of task ids; `undefined` when it is not an
 * id of a listen of this list (another list, another server's id, garbage).
 */
export function parseListenEventId(text: string, taskIds: readonly string[]): Positions | undefined {
  const match = ID.exec(text.trim());
  if (!match?.[1] || !match[2] || match[1] !== digestOf(taskIds)) return undefined;
  const at = match[2]
    .slice(1)
    .split('.')
    .map((p) => (p === '-' ? undefined : Number(p)));
  return at.length === taskIds.length ? at : undefined;
}
