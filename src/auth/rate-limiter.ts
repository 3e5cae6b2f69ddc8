/**
 * Requests per second per caller, as token buckets: each caller may burst up to `burst` requests,
 * then gets `perSecond` more each second. Buckets live only while they are not full again, so
 * memory follows the callers that are busy now.
 */
export class RateLimiter {
  readonly #perMs: number;
  readonly #burst: number;
  readonly #clock: () => number;
  readonly #buckets = new Map<string, { tokens: number; at: number }>();

  constructor(perSecond: number, burst: number, clock: () => number = Date.now) {
    this.#perMs = perSecond / 1000;
    this.#burst = Math.max(1, burst);
    this.#clock = clock;
  }

  /** Takes one request from `key`'s bucket: 0 if allowed, else the milliseconds until it would be. */
  take(key: string): number {
    const now = this.#clock();
    const bucket = this.#buckets.get(key) ?? { tokens: this.#burst, at: now };
    const tokens = Math.min(this.#burst, bucket.tokens + (now - bucket.at) * this.#perMs);
    if (tokens < 1) {
      this.#buckets.set(key, { tokens, at: now });
      return Math.ceil((1 - tokens) / this.#perMs);
    }
    this.#buckets.set(key, { tokens: tokens - 1, at: now });
    if (this.#buckets.size > 10_000) this.#prune(now);
    return 0;
  }

  #prune(now: number): void {
    for (const [key, b] of this.#buckets) {
      if (b.tokens + (now - b.at) * this.#perMs >= this.#burst) this.#buckets.delete(key);
    }
  }
}
