import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';
import { ensurePrivateDir } from '../files/private-modes.js';
import type { Principal } from './principal.js';

/** API keys start with this, so a bearer token is recognisably a key and not a JWT. */
export const API_KEY_PREFIX = 'th_';

// Loose: fields an operator adds (comments, owners) survive `api-keys add` rewriting the file.
const Entry = z.looseObject({
  principal: z.string().min(1),
  tenant: z.string().min(1),
  /** `sha256:<hex>` of the key; the key itself is never stored. */
  keyHash: z.string().regex(/^sha256:[0-9a-f]{64}$/, 'must be sha256:<64 hex digits>'),
  label: z.string().optional(),
  /** The skills this key may use; all when absent. */
  skills: z.array(z.string().min(1)).optional(),
});
const KeysFile = z.array(Entry);
export type ApiKeyEntry = z.infer<typeof Entry>;

/** Keys are 256 random bits: a plain SHA-256 is enough to store them (nothing to brute-force). */
export const hashApiKey = (key: string): string => `sha256:${createHash('sha256').update(key).digest('hex')}`;

export const newApiKey = (): string => `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;

function readEntries(file: string): ApiKeyEntry[] {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new Error(`${file}: not a JSON file (${(err as Error).message})`);
  }
  const parsed = KeysFile.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${file}: entry ${issue?.path.join('.')}: ${issue?.message}`);
  }
  return parsed.data;
}

/** How often the file's modification time is checked (on use, no timer). */
const RELOAD_CHECK_MS = 2000;

/**
 * The API keys file (`API_KEYS_FILE`): a JSON array of `{ principal, tenant, keyHash, label? }`.
 * Reread when it changes, so that `taskhandle api-keys add` takes effect without a restart. Once
 * loaded, a file that goes missing or invalid keeps the keys loaded before in force (a deleted file
 * must not lock every caller out, nor a half-written one), and `problem` hears it once per change,
 * until the file is back (an empty array `[]` is how to revoke every key).
 */
export class ApiKeys {
  readonly #file: string;
  readonly #problem: (message: string) => void;
  #byHash = new Map<string, Principal>();
  /** mtime, inode and size: a file replaced within one tick of a coarse clock still differs. */
  #signature = '';
  /** The signature of a file last refused (missing or invalid): said once, not at every check. */
  #refused = '';
  #checkedAt = 0;

  constructor(file: string, problem: (message: string) => void = () => {}) {
    this.#file = file;
    this.#problem = problem;
    this.reload();
  }

  /** Rereads the file if it changed; a file that went missing or invalid keeps the keys loaded before. */
  reload(): void {
    const signature = fileSignature(this.#file);
    if (signature === this.#signature) return;
    const loaded = this.#signature !== '';
    if (signature === 'missing' && loaded) {
      this.#refuse(signature, 'the file is gone');
      return;
    }
    let entries: ApiKeyEntry[];
    try {
      entries = readEntries(this.#file);
    } catch (err) {
      if (loaded) this.#refuse(signature, (err as Error).message);
      throw err;
    }
    this.#byHash = new Map(
      entries.map((e): [string, Principal] => [
        e.keyHash,
        {
          id: e.principal,
          tenant: e.tenant,
          via: 'api-key',
          ...(e.skills ? { skills: new Set(e.skills) } : {}),
        },
      ]),
    );
    this.#signature = signature;
    this.#refused = '';
  }

  #refuse(signature: string, why: string): void {
    if (signature === this.#refused) return;
    this.#refused = signature;
    this.#problem(
      `API_KEYS_FILE=${this.#file}: ${why}; the ${this.#byHash.size} keys loaded before stay in force until the file is back (write [] to revoke every key)`,
    );
  }

  get size(): number {
    return this.#byHash.size;
  }

  /** The principal of a key, if it is one of ours (looked up by hash: the key is never compared). */
  find(key: string, now = Date.now()): Principal | undefined {
    if (now - this.#checkedAt >= RELOAD_CHECK_MS) {
      this.#checkedAt = now;
      try {
        this.reload();
      } catch {
        // A file being edited may be invalid for a moment: the keys loaded before stay in force.
      }
    }
    return this.#byHash.get(hashApiKey(key));
  }
}

/** Adds a new key for (principal, tenant) to the file and returns it: shown once, stored hashed. */
export function addApiKey(file: string, principal: string, tenant: string, label?: string): string {
  const entries = readEntries(file);
  const key = newApiKey();
  const entry = Entry.parse({ principal, tenant, keyHash: hashApiKey(key), label });
  // The first key may be the first thing in its folder (`./data` of a new checkout).
  ensurePrivateDir(dirname(file), undefined);
  // Written aside and renamed: a server rereading the file never sees half of it.
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify([...entries, entry], null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, file);
  return key;
}

function fileSignature(file: string): string {
  try {
    const s = statSync(file);
    return `${s.mtimeMs}:${s.ino}:${s.size}`;
  } catch {
    return 'missing';
  }
}
