import type { LoggedEvent, TaskEvent } from '../../engine/events.js';
import type { PushConfig } from '../../engine/push.js';
import { type TaskRow, toPushConfigRow } from '../rows.js';

/** Statement parameters made from the engine's records, and log entries from written rows. */

export interface Encoded {
  kinds: string[];
  payloads: string[];
}

/** Serialized before any SQL runs: an event that cannot be stored fails the write with nothing written. */
export const encode = (events: readonly TaskEvent[]): Encoded => ({
  kinds: events.map((e) => e.kind),
  payloads: events.map((e) => JSON.stringify(e)),
});

export const logged = (row: TaskRow, firstSeq: number, events: readonly TaskEvent[]): LoggedEvent[] =>
  events.map((event, i) => ({ taskId: row.id, seq: firstSeq + i, at: row.updated_at, event }));

export const pushValues = (config: PushConfig): unknown[] => {
  const r = toPushConfigRow(config);
  return [
    r.task_id,
    r.id,
    r.url,
    r.token,
    r.auth_scheme,
    r.auth_credentials,
    r.all_events,
    r.format,
    r.created_at,
  ];
};
