import { createHash } from 'node:crypto';

/**
 * Where a `subscriptions/listen` stream stands, carried in each of its SSE event ids so that any
 * instance can go on from there: a digest of the task ids asked for (in the order asked, without
 * repeats) and, for each, the position in its task's log up to which the client has its state and
 * a digest of that state as shown (`-`: none sent yet), so that a resumed stream sends a task
 * again only when what it shows has changed. No session or store row holds it.
 *
 * 2026-07-28 itself does not resume streams ("Resumable SSE streams via Last-Event-ID are not
 * supported": its clients listen again, and get each task's state anew). A client that sends its
 * last event id back, as `Last-Event-ID` on the same listen request, gets only what changed after
 * it instead: a taskhandle addition, as the A2A and 2025-11-25 streams resume.
 */
export type Positions = ({ seq: number; shown: string } | undefined)[];

const PREFIX = 'tl1';
const ID = /^tl1\.([A-Za-z0-9_-]{11})((?:\.(?:\d{1,15}~[A-Za-z0-9_-]{8}|-))*)$/;

const digest = (text: string, length: number): string =>
  createHash('sha256').update(text).digest('base64url').slice(0, length);

/** The digest naming a list of task ids: a resume must ask for the same list. */
const digestOf = (taskIds: readonly string[]): string => digest(JSON.stringify(taskIds), 11);

/** The digest of what a notification shows (status, message, question), as event ids carry it. */
export const shownDigest = (shown: string): string => digest(shown, 8);

export const listenEventId = (taskIds: readonly string[], at: Positions): string =>
  `${PREFIX}.${digestOf(taskIds)}${at.map((p) => (p ? `.${p.seq}~${p.shown}` : '.-')).join('')}`;

/**
 * The positions a `Last-Event-ID` names for this list of task ids; `undefined` when it is not an
 * id of a listen of this list (another list, another server's id, garbage).
 */
export function parseListenEventId(text: string, taskIds: readonly string[]): Positions | undefined {
  const match = ID.exec(text.trim());
  if (!match?.[1] || match[2] === undefined || match[1] !== digestOf(taskIds)) return undefined;
  if (match[2] === '') return taskIds.length === 0 ? [] : undefined;
  const at: Positions = match[2]
    .slice(1)
    .split('.')
    .map((p) => {
      const [seq, shown] = p.split('~');
      return seq === '-' || shown === undefined ? undefined : { seq: Number(seq), shown };
    });
  return at.length === taskIds.length ? at : undefined;
}
