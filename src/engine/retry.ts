import { isJobError } from './errors.js';
import type { RetryPolicy } from './skill.js';

const DEFAULT_INITIAL_MS = 1000;
const DEFAULT_MAX_MS = 5 * 60_000;

/** Whether `err` is a failure its skill's policy retries: a transient JobError, or a listed kind. */
export function isRetryable(policy: RetryPolicy, err: unknown): boolean {
  if (isJobError(err) && err.options.transient) return true;
  if (!policy.retryOn?.length || typeof err !== 'object' || err === null) return false;
  const { code, name } = err as { code?: unknown; name?: unknown };
  return policy.retryOn.some((kind) => kind === code || kind === name);
}

/**
 * How long to wait before run `retries + 2` (the `retries`-th retry, from 0): `initialMs` doubled
 * per retry, capped at `maxMs`, less a random share of at most `jitter` (so that jobs failing
 * together do not all come back at once).
 */
export function backoffMs(policy: RetryPolicy, retries: number, random: () => number): number {
  const initial = policy.backoff?.initialMs ?? DEFAULT_INITIAL_MS;
  const max = policy.backoff?.maxMs ?? DEFAULT_MAX_MS;
  const jitter = Math.min(1, Math.max(0, policy.backoff?.jitter ?? 0));
  const full = Math.min(max, initial * 2 ** Math.min(retries, 30));
  return Math.round(full * (1 - jitter * random()));
}

/** The final failure's words: every attempt's reason, oldest first. */
export function failureText(reasons: readonly string[]): string {
  if (reasons.length <= 1) return `Job failed: ${reasons[0] ?? ''}`;
  return `Job failed after ${reasons.length} attempts:\n${reasons.map((r, i) => `${i + 1}. ${r}`).join('\n')}`;
}
