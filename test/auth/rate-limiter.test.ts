import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/auth/rate-limiter.js';

describe('RateLimiter', () => {
  it('lets a caller burst, then refills at the rate, and says how long to wait', () => {
    let now = 0;
    const limiter = new RateLimiter(2, 3, () => now);
    expect([limiter.take('a'), limiter.take('a'), limiter.take('a')]).toEqual([0, 0, 0]);
    expect(limiter.take('a')).toBe(500); // one token per 500 ms at 2/s
    now = 499;
    expect(limiter.take('a')).toBeGreaterThan(0);
    now = 1000; // two more tokens since 0
    expect([limiter.take('a'), limiter.take('a')]).toEqual([0, 0]);
    expect(limiter.take('a')).toBeGreaterThan(0);
  });

  it('keeps callers apart', () => {
    const limiter = new RateLimiter(1, 1, () => 0);
    expect(limiter.take('a')).toBe(0);
    expect(limiter.take('a')).toBe(1000);
    expect(limiter.take('b')).toBe(0);
  });

  it('never holds more than the burst, however long a caller was idle', () => {
    let now = 0;
    const limiter = new RateLimiter(10, 2, () => now);
    limiter.take('a');
    now = 60_000;
    expect([limiter.take('a'), limiter.take('a')]).toEqual([0, 0]);
    expect(limiter.take('a')).toBeGreaterThan(0);
  });
});
