import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiKeys, addApiKey, hashApiKey, newApiKey } from '../../src/auth/api-keys.js';
import { tempDirs } from '../helpers.js';

const dirs = tempDirs();

const keysFile = () => join(dirs.make(), 'api-keys.json');
const entry = (key: string, principal = 'alice', tenant = 'acme') => ({
  principal,
  tenant,
  keyHash: hashApiKey(key),
});
const write = (file: string, content: unknown) =>
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));

let stamp = 1_600_000_000;
/**
 * Gives the file a modification time it never had: two writes in one test can fall into the same
 * tick of a coarse filesystem clock, and the reload is triggered by a changed mtime.
 */
const touch = (file: string) => {
  stamp += 10;
  utimesSync(file, stamp, stamp);
};

/** A time far enough from the constructor's load that the first find() checks the file. */
const T0 = 1_700_000_000_000;
const CHECK_MS = 2000;

describe('newApiKey and hashApiKey', () => {
  it('makes th_ + 43 base64url characters (256 random bits), different every time', () => {
    const a = newApiKey();
    expect(a).toMatch(/^th_[A-Za-z0-9_-]{43}$/);
    expect(newApiKey()).not.toBe(a);
  });

  it('hashes to sha256:<hex of the key>, deterministic, never containing the key', () => {
    const key = newApiKey();
    const hex = createHash('sha256').update(key).digest('hex');
    expect(hashApiKey(key)).toBe(`sha256:${hex}`);
    expect(hashApiKey(key)).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(hashApiKey(key)).toBe(hashApiKey(key));
    expect(hashApiKey(newApiKey())).not.toBe(hashApiKey(key));
    expect(hashApiKey(key)).not.toContain(key.slice(3));
  });
});

describe('ApiKeys', () => {
  it("finds each key's principal and tenant, and nothing for an unknown key", () => {
    const file = keysFile();
    const [alice, bob] = [newApiKey(), newApiKey()];
    write(file, [entry(alice), { ...entry(bob, 'bob', 'globex'), label: 'laptop' }]);
    const keys = new ApiKeys(file);
    expect(keys.size).toBe(2);
    expect(keys.find(alice, T0)).toEqual({ id: 'alice', tenant: 'acme', via: 'api-key' });
    expect(keys.find(bob, T0)).toEqual({ id: 'bob', tenant: 'globex', via: 'api-key' });
    expect(keys.find(newApiKey(), T0)).toBeUndefined();
    expect(keys.find('', T0)).toBeUndefined();
    expect(keys.find(hashApiKey(alice), T0)).toBeUndefined(); // the stored hash is not a key
  });

  it('has no keys when the file does not exist, and takes it up once it appears', () => {
    const file = keysFile();
    const keys = new ApiKeys(file);
    expect(keys.size).toBe(0);
    expect(keys.find(newApiKey(), T0)).toBeUndefined();

    const key = addApiKey(file, 'alice', 'acme');
    expect(keys.find(key, T0 + CHECK_MS)).toEqual({ id: 'alice', tenant: 'acme', via: 'api-key' });
  });

  it('refuses a file that is not JSON, naming the file', () => {
    const file = keysFile();
    write(file, '[{"principal": "alice",');
    expect(() => new ApiKeys(file)).toThrow(`${file}: not a JSON file`);
  });

  it('refuses an entry with a bad hash or a missing field, naming the file and the entry', () => {
    const file = keysFile();
    write(file, [entry(newApiKey()), { ...entry(newApiKey()), keyHash: 'md5:abc' }]);
    expect(() => new ApiKeys(file)).toThrow(`${file}: entry 1.keyHash: must be sha256:<64 hex digits>`);

    write(file, [{ principal: 'alice', keyHash: hashApiKey(newApiKey()) }]);
    expect(() => new ApiKeys(file)).toThrow(`${file}: entry 0.tenant: `);

    // The key itself in place of its hash: refused, so a key never sits in the file in clear.
    write(file, [{ ...entry('x'), keyHash: newApiKey() }]);
    expect(() => new ApiKeys(file)).toThrow(`${file}: entry 0.keyHash`);

    write(file, { keys: [] });
    expect(() => new ApiKeys(file)).toThrow(file);
  });

  it('takes up a changed file after the 2 s check interval, not before', () => {
    const file = keysFile();
    const first = addApiKey(file, 'alice', 'acme');
    const keys = new ApiKeys(file);
    expect(keys.find(first, T0)?.id).toBe('alice');

    const second = addApiKey(file, 'bob', 'globex');
    touch(file);
    expect(keys.find(second, T0 + CHECK_MS - 1)).toBeUndefined();
    expect(keys.find(second, T0 + CHECK_MS)).toEqual({ id: 'bob', tenant: 'globex', via: 'api-key' });
    expect(keys.find(first, T0 + CHECK_MS)?.id).toBe('alice');
    expect(keys.size).toBe(2);
  });

  it('stops accepting a key removed from the file', () => {
    const file = keysFile();
    const [kept, revoked] = [newApiKey(), newApiKey()];
    write(file, [entry(kept), entry(revoked, 'mallory')]);
    const keys = new ApiKeys(file);
    expect(keys.find(revoked, T0)?.id).toBe('mallory');

    write(file, [entry(kept)]);
    touch(file);
    expect(keys.find(revoked, T0 + CHECK_MS)).toBeUndefined();
    expect(keys.find(kept, T0 + CHECK_MS)?.id).toBe('alice');
  });

  it('keeps the keys it had while the file is invalid, and takes the file up once it is fixed', () => {
    const file = keysFile();
    const [old, fresh] = [newApiKey(), newApiKey()];
    write(file, [entry(old)]);
    const keys = new ApiKeys(file);

    write(file, '[{"principal": "ali'); // half written by an editor
    touch(file);
    expect(keys.find(old, T0)?.id).toBe('alice');
    write(file, [entry(old), { ...entry(fresh), keyHash: 'sha256:nothex' }]);
    touch(file);
    expect(keys.find(old, T0 + CHECK_MS)?.id).toBe('alice');
    expect(keys.find(fresh, T0 + CHECK_MS)).toBeUndefined();
    expect(() => keys.reload()).toThrow(file);

    write(file, [entry(fresh, 'bob')]);
    touch(file);
    expect(keys.find(fresh, T0 + 2 * CHECK_MS)?.id).toBe('bob');
    expect(keys.find(old, T0 + 2 * CHECK_MS)).toBeUndefined();
  });

  it('keeps the keys it had when the file is deleted, says so once, and takes the file up when it is back', () => {
    const file = keysFile();
    const [old, fresh] = [newApiKey(), newApiKey()];
    write(file, [entry(old)]);
    const problems: string[] = [];
    const keys = new ApiKeys(file, (m) => problems.push(m));
    rmSync(file);
    expect(keys.find(old, T0)?.id).toBe('alice');
    expect(keys.find(old, T0 + CHECK_MS)?.id).toBe('alice');
    expect(problems).toEqual([
      `API_KEYS_FILE=${file}: the file is gone; the 1 keys loaded before stay in force until the file is back (write [] to revoke every key)`,
    ]);
    write(file, [entry(fresh, 'bob')]);
    expect(keys.find(fresh, T0 + 2 * CHECK_MS)?.id).toBe('bob');
    expect(keys.find(old, T0 + 2 * CHECK_MS)).toBeUndefined();
    // An invalid file is said once too, with what is wrong.
    write(file, '[{"principal": "ali');
    touch(file);
    expect(keys.find(fresh, T0 + 3 * CHECK_MS)?.id).toBe('bob');
    expect(keys.find(fresh, T0 + 4 * CHECK_MS)?.id).toBe('bob');
    expect(problems).toHaveLength(2);
    expect(problems[1]).toContain('not a JSON file');
    // An empty array is how to revoke every key.
    write(file, []);
    touch(file);
    expect(keys.find(fresh, T0 + 5 * CHECK_MS)).toBeUndefined();
  });

  it('takes up a replaced file even when its mtime did not change (coarse filesystem clocks)', () => {
    // `api-keys add` replaces the file by rename. On a filesystem whose timestamps are coarse
    // (1-2 s on FAT/HFS+/some network mounts, a jiffy on Linux before multigrain timestamps) a key
    // added in the same tick as the server's last look gets the same mtime, and comparing the
    // mtime alone never sees it; the inode and size did change.
    const file = keysFile();
    addApiKey(file, 'alice', 'acme');
    touch(file);
    const keys = new ApiKeys(file);

    const added = addApiKey(file, 'bob', 'globex');
    utimesSync(file, stamp, stamp); // the mtime the server saw
    expect(keys.find(added, T0)).toEqual({ id: 'bob', tenant: 'globex', via: 'api-key' });
  });
});

describe('addApiKey', () => {
  it('creates the file (mode 0600) and returns a key that a fresh load finds', () => {
    const file = keysFile();
    const key = addApiKey(file, 'alice', 'acme', 'ci runner');
    expect(key).toMatch(/^th_[A-Za-z0-9_-]{43}$/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain(key);
    expect(JSON.parse(text)).toEqual([{ ...entry(key), label: 'ci runner' }]);
    expect(new ApiKeys(file).find(key)).toEqual({ id: 'alice', tenant: 'acme', via: 'api-key' });
  });

  it('appends, keeping the other entries, writing valid JSON and leaving no temp file behind', () => {
    const file = keysFile();
    const existing = [entry(newApiKey()), { ...entry(newApiKey(), 'bob', 'globex'), label: 'old' }];
    write(file, existing);
    const key = addApiKey(file, 'carol', 'acme');

    expect(statSync(file).mode & 0o777).toBe(0o600);
    const entries = JSON.parse(readFileSync(file, 'utf8')) as unknown[];
    expect(entries).toEqual([...existing, entry(key, 'carol', 'acme')]);
    expect(readdirSync(dirname(file))).toEqual(['api-keys.json']);

    const keys = new ApiKeys(file);
    expect(keys.size).toBe(3);
    expect(keys.find(key)).toEqual({ id: 'carol', tenant: 'acme', via: 'api-key' });
  });

  it('keeps fields of other entries it does not know, as the operator wrote them', () => {
    // addApiKey rewrites the whole file: whatever else an operator noted on an entry must survive.
    const file = keysFile();
    const noted = { ...entry(newApiKey()), comment: 'rotate in June' };
    write(file, [noted]);
    addApiKey(file, 'bob', 'globex');
    const entries = JSON.parse(readFileSync(file, 'utf8')) as unknown[];
    expect(entries[0]).toEqual(noted);
  });

  it('refuses to touch an invalid file', () => {
    const file = keysFile();
    write(file, '[{"principal": "alice",');
    expect(() => addApiKey(file, 'bob', 'globex')).toThrow(file);
    expect(readFileSync(file, 'utf8')).toBe('[{"principal": "alice",');
    expect(readdirSync(dirname(file))).toEqual(['api-keys.json']);
  });
});
