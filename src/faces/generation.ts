import { MAX_POLL_WAIT_MS } from '../engine/generation.js';

/**
 * The task-generations extension (A2A 1.1 draft, section 3.2.7, as an opt-in extension of v1.0 and
 * v0.3): every task shows its generation (its event log's sequence) under this URI, and GetTask,
 * CancelTask and an answering SendMessage take the draft's conditions. docs/generations.md.
 */
export const GENERATION_EXTENSION_URI = 'https://taskhandle.dev/extensions/task-generations/v1';

export const GENERATION_EXTENSION_CARD_ENTRY = {
  uri: GENERATION_EXTENSION_URI,
  description:
    "Task generations (the A2A 1.1 draft's, section 3.2.7): metadata[uri].generation on every task grows by one " +
    'with each entry of its event log (the eventId of streamed events). GetTask with currentGeneration waits ' +
    '(up to 30 s, less with Prefer: wait=N) until the task passes it; CancelTask with ifGenerationMatch and ' +
    'SendMessage with configuration.ifGenerationMatch apply only at that generation, else ' +
    'TaskGenerationMismatchError (-32010, HTTP 409, gRPC ABORTED).',
  required: false,
};

/** What a call asks of generations: a long poll's point, a conditional command's generation. */
export interface GenerationAsk {
  /** GetTask: answer once the task's generation is past this one. */
  currentGeneration?: number;
  /** CancelTask, SendMessage to a task: only while the task is at this generation. */
  ifGenerationMatch?: number;
}

/**
 * A generation as a caller sends it: a non-negative integer, as a JSON number or (protobuf JSON's
 * int64) a string of digits. `undefined` when absent; a string saying what is wrong otherwise.
 */
export function generationOf(value: unknown, field: string): number | undefined | { problem: string } {
  if (value === undefined || value === null) return undefined;
  const n = typeof value === 'string' && /^\d{1,16}$/.test(value) ? Number(value) : value;
  if (typeof n === 'number' && Number.isSafeInteger(n) && n >= 0) return n;
  return {
    problem: `${field} must be a non-negative integer (a task's generation), not ${JSON.stringify(value)}`,
  };
}

/**
 * How long a long poll may wait: `Prefer: wait=N` (RFC 7240, seconds) when the caller sends it,
 * capped at MAX_POLL_WAIT_MS; the cap otherwise.
 */
export function pollWaitMs(prefer: string | string[] | undefined): number {
  const values = Array.isArray(prefer) ? prefer : prefer ? [prefer] : [];
  for (const pref of values.flatMap((v) => v.split(','))) {
    const [token = ''] = pref.split(';');
    const [name = '', raw] = token.split('=').map((s) => s.trim().replace(/^"|"$/g, ''));
    if (name.toLowerCase() === 'wait' && raw !== undefined && /^\d{1,9}$/.test(raw)) {
      return Math.min(MAX_POLL_WAIT_MS, Number(raw) * 1000);
    }
  }
  return MAX_POLL_WAIT_MS;
}
