import { randomFillSync } from 'node:crypto';

// Random bytes fetched in batches, as crypto.randomUUID does: one getrandom call per id costs more
// than the rest of making it.
const pool = Buffer.alloc(16 * 256);
let offset = pool.length;

function random16(): Buffer {
  if (offset === pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const b = Buffer.from(pool.subarray(offset, offset + 16));
  offset += 16;
  return b;
}

/**
 * A UUID version 7 (RFC 9562): 48 bits of Unix milliseconds, then 74 random bits. Task ids are
 * keys of several indexes; ids that grow with time put new rows at the right edge of each B-tree
 * instead of on a random page, so a burst of creates dirties (and syncs) a few pages, not one per
 * task. 74 random bits keep ids unguessable; every lookup checks the caller anyway.
 */
export function uuidv7(now = Date.now()): string {
  const b = random16();
  b.writeUIntBE(now, 0, 6);
  b[6] = ((b[6] as number) & 0x0f) | 0x70;
  b[8] = ((b[8] as number) & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * The id of a task when callers are anonymous, where knowing the id is all it takes to reach the
 * task: 128 random bits, after 48 bits of Unix milliseconds that keep the index locality of
 * {@link uuidv7}. 44 hex digits.
 */
export function anonymousTaskId(now = Date.now()): string {
  const time = Buffer.alloc(6);
  time.writeUIntBE(now, 0, 6);
  return `${time.toString('hex')}${random16().toString('hex')}`;
}
