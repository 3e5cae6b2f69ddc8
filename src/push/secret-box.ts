import { createCipheriv, createDecipheriv, randomBytes, randomUUID } from 'node:crypto';
import { link, mkdir, open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, tightenIfPresent } from '../files/private-modes.js';

/** The key's file in KEYS_DIR (not `*.json`: the signing keys' loader does not see it). */
export const SEALING_KEY_FILE = 'webhook-secrets.key';

// Marks a sealed value; anything else was stored before sealing existed and is read as it is.
const PREFIX = 'sealed:v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** What a sealed value is for: it is bound to it, so a sealed token cannot pass for credentials. */
export type SecretPurpose = 'token' | 'credentials';

/**
 * Seals webhook secrets (a config's token, its authentication credentials) with AES-256-GCM before
 * they are stored, so a copy of the database alone does not reveal them. The key lives in KEYS_DIR
 * beside the signing keys (made 0600 at first start, shared by every instance reading that folder).
 *
 * @example
 *   const box = await SecretBox.open(config.keysDir);
 *   const stored = box.seal('my-token', 'token'); // "sealed:v1:..."
 *   box.unseal(stored, 'token'); // "my-token"
 */
export class SecretBox {
  readonly #key: Buffer;

  private constructor(key: Buffer) {
    this.#key = key;
  }

  /** Reads the key in `dir`, or makes it (0600) if there is none; two instances starting at once agree. */
  static async open(dir: string, logger?: Pick<Logger, 'warn'>): Promise<SecretBox> {
    await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    const file = join(dir, SEALING_KEY_FILE);
    tightenIfPresent(file, PRIVATE_FILE_MODE, logger);
    const existing = await readKeyFile(file);
    return new SecretBox(existing ?? (await createKeyFile(dir, file)));
  }

  seal(plain: string, purpose: SecretPurpose): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(Buffer.from(purpose));
    const sealed = Buffer.concat([iv, cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${PREFIX}${sealed.toString('base64url')}`;
  }

  /**
   * The secret as the caller gave it. A value stored before sealing existed is returned as it is.
   * Throws when a sealed value does not open: another key sealed it (a different KEYS_DIR), or it
   * was altered.
   */
  unseal(stored: string, purpose: SecretPurpose): string {
    if (!stored.startsWith(PREFIX)) return stored;
    const bytes = Buffer.from(stored.slice(PREFIX.length), 'base64url');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, bytes.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(purpose));
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
      const body = bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES);
      return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
    } catch {
      throw new Error(
        `the webhook's ${purpose} cannot be unsealed: it was sealed with another key than ${SEALING_KEY_FILE} in KEYS_DIR (every instance must read the same KEYS_DIR)`,
      );
    }
  }
}

async function readKeyFile(file: string): Promise<Buffer | undefined> {
  const text = await readFile(file, 'utf8').catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return undefined;
    throw e;
  });
  if (text === undefined) return undefined;
  const key = Buffer.from(text.trim(), 'base64');
  if (key.length !== 32) throw new Error(`${file} is not a 32-byte key in base64`);
  return key;
}

/**
 * Writes a fresh key to a temporary file, synced, then links it to its name: link(2) fails if the
 * name exists, so of two instances starting at once exactly one key wins, and nobody reads a half file.
 */
async function createKeyFile(dir: string, file: string): Promise<Buffer> {
  const tmp = join(dir, `.${SEALING_KEY_FILE}.${process.pid}.${randomUUID()}.tmp`);
  const key = randomBytes(32);
  try {
    const fh = await open(tmp, 'wx', PRIVATE_FILE_MODE);
    try {
      await fh.writeFile(`${key.toString('base64')}\n`);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await link(tmp, file);
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const theirs = await readKeyFile(file);
    if (!theirs) throw err;
    return theirs;
  } finally {
    await rm(tmp, { force: true });
  }
}
