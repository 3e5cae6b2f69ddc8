import { InputRequired, StoreFailed, WriteRefused } from './skill-context.js';

/**
 * How a job's run ended when its skill did not return: it asked for input, was canceled, was
 * stopped by shutdown, lost its task (canceled, expired or taken over), had a write fail in the
 * store, or failed. The runner keeps one handler per ending.
 */
export type Ending = 'asked' | 'canceled' | 'shutdown' | 'lost' | 'store-failed' | 'failed';

/** The ending of a run that threw `err`, its signal aborted for `reason` (undefined if not). */
export function endingOf(err: unknown, reason: unknown): Ending {
  // A cancel wins over whatever the job did after it (asking for input included).
  if (err instanceof InputRequired && reason === undefined) return 'asked';
  if (reason === 'cancel') return 'canceled';
  if (reason === 'shutdown') return 'shutdown';
  if (reason === 'lease-lost' || err instanceof WriteRefused) return 'lost';
  if (err instanceof StoreFailed) return 'store-failed';
  return 'failed';
}
