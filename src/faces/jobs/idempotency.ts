import { createHash } from 'node:crypto';

/** Task metadata key holding the hash of the payload an Idempotency-Key was first used with. */
export const IDEMPOTENCY_METADATA = 'taskhandle.jobs.idempotency';

/** The engine's messageId for a keyed request: the engine's (owner, messageId) dedupe does the rest. */
export const messageIdOf = (key: string): string => `idem:${key}`;

/** A hash of the request payload (canonical JSON: object keys sorted). */
export function payloadHash(payload: unknown): string {
  return `sha256:${createHash('sha256').update(canonical(payload)).digest('hex')}`;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Keys of requests still being answered, per owner: a second request with one of them is a 409. */
export class InFlightKeys {
  readonly #keys = new Set<string>();

  /** Takes the key; false when a request with it is already in flight. */
  take(owner: string, key: string): boolean {
    const k = `${owner}\n${key}`;
    if (this.#keys.has(k)) return false;
    this.#keys.add(k);
    return true;
  }

  release(owner: string, key: string): void {
    this.#keys.delete(`${owner}\n${key}`);
  }
}

/** Idempotency-Key values accepted: a short token (the draft recommends a UUID). */
export const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
