import { setTimeout as sleep } from 'node:timers/promises';
import type { A2AClient, Json, StreamEvent } from './client.js';
import { CliError, EXIT } from './exit-codes.js';
import { isSettled } from './states.js';

/** A2A's UnsupportedOperation: what SubscribeToTask answers for a task that has already ended. */
const UNSUPPORTED_OPERATION = -32004;

export interface FollowOptions {
  /** Called with each event, in order (a final GetTask snapshot comes as `{ task }`). */
  onEvent(event: StreamEvent): void;
  /** Called before each reconnect, with the delay and the last event id seen. */
  onRetry?(delayMs: number, lastEventId: string | undefined, reason: string): void;
  /** How long to keep trying while the agent cannot be reached (default 60 s). */
  retryForMs?: number;
  /** Resume after this event id (Last-Event-ID) instead of from the task as it stands. */
  lastEventId?: string | undefined;
  /** Stops following (Ctrl-C): `follow` then throws the signal's reason, whatever it was doing. */
  signal?: AbortSignal;
}

/** The task state an event carries, if any (a task snapshot or a status update). */
export function stateOf(result: Json): string | undefined {
  const state = result.task?.status?.state ?? result.statusUpdate?.status?.state;
  return typeof state === 'string' ? state : undefined;
}

/**
 * Follows a task over SubscribeToTask until it is terminal or waits for input, and returns that
 * state. A stream that ends early or breaks (a dropped connection, a server restart) is reopened
 * with Last-Event-ID, backing off from 250 ms to 5 s, so no event is lost or repeated; after
 * `retryForMs` without reaching the agent it gives up with EXIT.connection.
 *
 * @example
 *   const state = await follow(client, id, { onEvent: (e) => console.log(JSON.stringify(e.result)) });
 */
export async function follow(client: A2AClient, id: string, o: FollowOptions): Promise<string> {
  const retryForMs = o.retryForMs ?? 60_000;
  let lastEventId = o.lastEventId;
  let backoff = 250;
  let failingSince: number | undefined;
  for (;;) {
    let reason = 'the stream ended before the task did';
    try {
      for await (const event of client.stream('SubscribeToTask', { id }, lastEventId, o.signal)) {
        if (event.id !== undefined) lastEventId = event.id;
        failingSince = undefined;
        backoff = 250;
        o.onEvent(event);
        const state = stateOf(event.result);
        if (state && isSettled(state)) return state;
      }
    } catch (err) {
      o.signal?.throwIfAborted();
      if (!(err instanceof CliError)) throw err;
      if (err.rpcCode === UNSUPPORTED_OPERATION) {
        // Nothing left to stream: the task has ended (or the agent cannot stream). Show where it stands.
        const task = await client.call('GetTask', { id });
        o.onEvent({ id: undefined, result: { task } });
        const state = stateOf({ task }) ?? 'unknown';
        if (isSettled(state)) return state;
        throw err;
      }
      if (err.exitCode !== EXIT.connection) throw err;
      reason = err.message;
    }
    failingSince ??= Date.now();
    if (Date.now() - failingSince > retryForMs)
      throw new CliError(EXIT.connection, `gave up after ${Math.round(retryForMs / 1000)} s: ${reason}`);
    o.onRetry?.(backoff, lastEventId, reason);
    await sleep(backoff, undefined, { signal: o.signal });
    backoff = Math.min(backoff * 2, 5_000);
  }
}
