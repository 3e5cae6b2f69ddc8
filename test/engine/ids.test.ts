import { describe, expect, it } from 'vitest';
import { anonymousTaskId, uuidv7 } from '../../src/engine/ids.js';

describe('uuidv7', () => {
  it('is an RFC 9562 version 7 UUID carrying its millisecond timestamp', () => {
    const at = Date.UTC(2026, 10, 30, 2, 40, 0, 123);
    const id = uuidv7(at);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(at);
  });

  it('sorts by creation time, and ids of one millisecond still differ', () => {
    const ids = [uuidv7(1_000), uuidv7(2_000), uuidv7(3_000)];
    expect([...ids].sort()).toEqual(ids);
    const same = new Set(Array.from({ length: 1000 }, () => uuidv7(5_000)));
    expect(same.size).toBe(1000);
  });
});

describe('anonymousTaskId', () => {
  it('is 48 bits of time then 128 random bits, in hex, sorting by creation time', () => {
    const at = Date.UTC(2026, 10, 30, 3, 20);
    const id = anonymousTaskId(at);
    expect(id).toMatch(/^[0-9a-f]{44}$/);
    expect(Number.parseInt(id.slice(0, 12), 16)).toBe(at);
    expect([anonymousTaskId(2_000), anonymousTaskId(1_000)].sort()[0]?.slice(0, 12)).toBe('0000000003e8');
    const random = new Set(Array.from({ length: 1000 }, () => anonymousTaskId(at).slice(12)));
    expect(random.size).toBe(1000);
  });
});
