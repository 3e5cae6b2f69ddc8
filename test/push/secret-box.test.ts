import { chmodSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SEALING_KEY_FILE, SecretBox } from '../../src/push/secret-box.js';
import { SigningKeys } from '../../src/push/signing-keys.js';
import { tempDirs } from '../helpers.js';

const dirs = tempDirs();

describe('SecretBox', () => {
  it('seals a secret so the stored text does not hold it, and unseals it', async () => {
    const box = await SecretBox.open(dirs.make());
    const sealed = box.seal('my-secret-token', 'token');
    expect(sealed).toMatch(/^sealed:v1:[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain('my-secret-token');
    expect(box.unseal(sealed, 'token')).toBe('my-secret-token');
    // A fresh nonce each time: equal secrets do not look equal at rest.
    expect(box.seal('my-secret-token', 'token')).not.toBe(sealed);
  });

  it('makes its key 0600 in a 0700 directory at first start, and reads the same key after', async () => {
    const dir = join(dirs.make(), 'keys');
    const sealed = (await SecretBox.open(dir)).seal('x', 'credentials');
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, SEALING_KEY_FILE)).mode & 0o777).toBe(0o600);
    expect((await SecretBox.open(dir)).unseal(sealed, 'credentials')).toBe('x');
    // Beside the signing keys, which do not mistake it for one of theirs.
    await SigningKeys.open(dir, { issuer: 'https://agent.example' });
    expect(readdirSync(dir).filter((n) => !n.endsWith('.json'))).toEqual([SEALING_KEY_FILE]);
  });

  it('instances starting at once on one KEYS_DIR agree on one key', async () => {
    const dir = dirs.make();
    const boxes = await Promise.all(Array.from({ length: 8 }, () => SecretBox.open(dir)));
    const sealed = boxes[0]?.seal('shared', 'token') ?? '';
    for (const box of boxes) expect(box.unseal(sealed, 'token')).toBe('shared');
    expect(readdirSync(dir)).toEqual([SEALING_KEY_FILE]);
  });

  it('values stored before sealing existed are read as they are', async () => {
    const box = await SecretBox.open(dirs.make());
    expect(box.unseal('plain-old-token', 'token')).toBe('plain-old-token');
  });

  it('refuses a value sealed for another purpose, with another key, or altered, saying what to check', async () => {
    const box = await SecretBox.open(dirs.make());
    const other = await SecretBox.open(dirs.make());
    const sealed = box.seal('s3cret', 'token');
    expect(() => box.unseal(sealed, 'credentials')).toThrow(/credentials cannot be unsealed/);
    expect(() => other.unseal(sealed, 'token')).toThrow(/same KEYS_DIR/);
    // One character of the sealed text changed (to another one: never the same by chance).
    const at = Math.floor(sealed.length / 2);
    const altered = `${sealed.slice(0, at)}${sealed[at] === 'A' ? 'B' : 'A'}${sealed.slice(at + 1)}`;
    expect(altered).not.toBe(sealed);
    expect(() => box.unseal(altered, 'token')).toThrow(/cannot be unsealed/);
  });

  it('a key file left open to others is tightened; a malformed one stops the start', async () => {
    const dir = dirs.make();
    await SecretBox.open(dir);
    const file = join(dir, SEALING_KEY_FILE);
    chmodSync(file, 0o644);
    await SecretBox.open(dir);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    writeFileSync(file, 'too short\n');
    await expect(SecretBox.open(dir)).rejects.toThrow(/not a 32-byte key/);
  });
});
