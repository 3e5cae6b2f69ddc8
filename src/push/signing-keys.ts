import { createHash, randomUUID } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type CryptoKey,
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWK,
  SignJWT,
} from 'jose';
import type { Logger } from 'pino';
import { z } from 'zod';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, tightenIfPresent } from '../files/private-modes.js';

/** What the caller knows about one delivery attempt; `sign()` adds iss, iat, exp, jti and the body hash. */
export interface NotificationClaims {
  /** The webhook URL; becomes `aud`. */
  aud: string;
  taskId: string;
  notificationId: string;
  /** The exact request body that will be POSTed; only its SHA-256 goes into the token. */
  body: string;
}

/** The payload a receiver sees after verifying the token. */
export interface NotificationJwtPayload {
  iss: string;
  aud: string;
  iat: number;
  exp: number;
  jti: string;
  taskId: string;
  notificationId: string;
  request_body_sha256: string;
}

export interface SigningKeysOptions {
  /** The agent's public base URL; becomes `iss`. */
  issuer: string;
  /** Token lifetime (`exp - iat`), whole seconds; default 5 minutes. */
  maxTokenLifetimeMs?: number;
  /**
   * Extra time a retired key stays published after its last token expired. It covers a server that
   * still signs with a key another process (the CLI) retired, until its next `reload()`, and receivers
   * whose clocks run a little behind ours. Keep it above the reload interval. Default 60 s.
   */
  pruneGraceMs?: number;
  /** Default `now` of every method, and creation time of keys `open()`/`reload()` generate; Date.now. */
  clock?: () => number;
  /** Told when the directory or a key file was found open to other users (and tightened). */
  logger?: Pick<Logger, 'warn'>;
}

/** Lowercase hex SHA-256 of the UTF-8 bytes of `body` (the `request_body_sha256` claim). */
export const bodySha256 = (body: string): string => createHash('sha256').update(body, 'utf8').digest('hex');

const KeyFile = z.object({
  privateJwk: z.object({
    kty: z.literal('EC'),
    crv: z.literal('P-256'),
    x: z.string(),
    y: z.string(),
    d: z.string(),
  }),
  createdAt: z.number().int(),
  retiredAt: z.number().int().optional(),
});
type StoredKey = z.infer<typeof KeyFile> & { kid: string };

/** Generates a key pair and writes `<kid>.json`; the kid is the RFC 7638 thumbprint. */
async function generateKey(dir: string, now: number): Promise<StoredKey> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const { kty, crv, x, y, d } = await exportJWK(privateKey);
  const privateJwk = KeyFile.shape.privateJwk.parse({ kty, crv, x, y, d });
  const key = { kid: await calculateJwkThumbprint(privateJwk), privateJwk, createdAt: now };
  await writeKey(dir, key);
  return key;
}

/** Temp file + fsync + rename in the same directory, so a crash leaves the old file or the new, never half. */
async function writeKey(dir: string, { kid, ...file }: StoredKey): Promise<void> {
  const tmp = join(dir, `.${kid}.${process.pid}.${randomUUID()}.tmp`);
  try {
    const fh = await open(tmp, 'wx', PRIVATE_FILE_MODE);
    try {
      await fh.writeFile(JSON.stringify(file));
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, join(dir, `${kid}.json`));
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}

const isKeyFile = (name: string) => name.endsWith('.json') && !name.startsWith('.');

/** One key file, or undefined if it was deleted meanwhile (pruned by another process). */
async function readKey(dir: string, name: string): Promise<StoredKey | undefined> {
  const text = await readFile(join(dir, name), 'utf8').catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return undefined;
    throw e;
  });
  if (text === undefined) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {}
  const parsed = KeyFile.safeParse(json);
  const kid = parsed.success ? await calculateJwkThumbprint(parsed.data.privateJwk) : '';
  // A kid that is not the key's thumbprint would send receivers to the wrong key: refuse, do not publish.
  if (!parsed.success || `${kid}.json` !== name)
    throw new Error(`signing key file ${join(dir, name)} is malformed`);
  return { ...parsed.data, kid };
}

async function readKeys(dir: string): Promise<StoredKey[]> {
  const keys = await Promise.all((await readdir(dir)).filter(isKeyFile).map((name) => readKey(dir, name)));
  return keys.filter((k) => k !== undefined);
}

/**
 * Newest non-retired key (ties broken by kid, so every process picks the same one). Two processes that
 * generated a first key at once, or rotated at once, leave several non-retired keys: the newest signs, the
 * others stay published so their tokens still verify, and the next rotation retires all of them.
 */
const pickActive = (keys: StoredKey[]): StoredKey | undefined =>
  keys
    .filter((k) => k.retiredAt === undefined)
    .sort((a, b) => b.createdAt - a.createdAt || (a.kid < b.kid ? -1 : 1))[0];

/** Picks the public members rather than deleting `d`, so no private member can ever slip through. */
function publicJwk({ kid, privateJwk: k }: StoredKey): JWK {
  return { kty: k.kty, crv: k.crv, x: k.x, y: k.y, kid, alg: 'ES256', use: 'sig' };
}

/**
 * For `taskhandle keys rotate`, also while a server runs on `dir`; returns the new kid. Reads the directory
 * afresh so keys another process added are retired too. Writes the new key first, then retires the others:
 * a crash in between leaves two valid keys, never none.
 */
export async function rotateSigningKey(dir: string, now = Date.now()): Promise<string> {
  await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const old = await readKeys(dir);
  const fresh = await generateKey(dir, now);
  for (const k of old) if (k.retiredAt === undefined) await writeKey(dir, { ...k, retiredAt: now });
  return fresh.kid;
}

/**
 * ES256 keys for push notification tokens, one JSON file per key in `dir`.
 * @example
 *   const keys = await SigningKeys.open(join(dataDir, 'keys'), { issuer: 'https://agent.example' });
 *   const token = await keys.sign({ aud: url, taskId, notificationId, body });
 */
export class SigningKeys {
  private keys: StoredKey[] = [];
  private active!: StoredKey;
  private cryptoKeys = new Map<string, CryptoKey | Uint8Array>();
  private seen: string | undefined; // undefined until the first load, which an empty directory must not skip
  private queue: Promise<unknown> = Promise.resolve();
  private readonly lifetimeS: number;
  private readonly keepMs: number;
  private readonly clock: () => number;

  private constructor(
    readonly dir: string,
    private readonly opts: SigningKeysOptions,
  ) {
    this.lifetimeS = Math.floor((opts.maxTokenLifetimeMs ?? 300_000) / 1000);
    if (this.lifetimeS < 1) throw new Error('maxTokenLifetimeMs must be at least 1000');
    this.keepMs = this.lifetimeS * 1000 + (opts.pruneGraceMs ?? 60_000);
    this.clock = opts.clock ?? Date.now;
  }

  /**
   * Loads the keys in `dir` (created 0700 if missing), generating the first one if none is valid. The
   * directory holds only private keys: one open to other users, or a key file, is tightened.
   */
  static async open(dir: string, opts: SigningKeysOptions): Promise<SigningKeys> {
    await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    tightenIfPresent(dir, PRIVATE_DIR_MODE, opts.logger);
    for (const name of (await readdir(dir)).filter(isKeyFile))
      tightenIfPresent(join(dir, name), PRIVATE_FILE_MODE, opts.logger);
    const keys = new SigningKeys(dir, opts);
    await keys.reload();
    return keys;
  }

  get activeKid(): string {
    return this.active.kid;
  }

  /** Rereads the directory if its key files changed (names, inodes, mtimes); true if it reread. */
  reload(): Promise<boolean> {
    return this.serial(() => this.load(false));
  }

  /** Generates a new active key and retires the previous one at `now`; returns the new kid. */
  rotate(now = this.clock()): Promise<string> {
    return this.serial(async () => {
      const kid = await rotateSigningKey(this.dir, now);
      await this.load(true);
      return kid;
    });
  }

  /** Deletes retired keys whose last token expired (plus grace); returns their kids. */
  prune(now = this.clock()): Promise<string[]> {
    return this.serial(async () => {
      await this.load(false);
      const gone = this.keys.filter((k) => !this.published(k, now));
      for (const k of gone) await rm(join(this.dir, `${k.kid}.json`), { force: true });
      if (gone.length > 0) await this.load(true);
      return gone.map((k) => k.kid);
    });
  }

  /** The public keys receivers verify with: active, and retired ones whose tokens may still be valid. */
  jwks(now = this.clock()): { keys: JWK[] } {
    return { keys: this.keys.filter((k) => this.published(k, now)).map(publicJwk) };
  }

  /**
   * Every published key with its private key, the active one first: what signs an agent card (each
   * published key signs it, so a card stays verifiable through a rotation; card-keys.ts).
   */
  async publishedSigners(now = this.clock()): Promise<{ kid: string; key: CryptoKey | Uint8Array }[]> {
    const { kid: active } = this.active;
    const kids = this.keys
      .filter((k) => this.published(k, now))
      .map((k) => k.kid)
      .sort((a, b) => (a === active ? -1 : b === active ? 1 : a < b ? -1 : 1));
    return Promise.all(kids.map(async (kid) => ({ kid, key: await this.cryptoKey(kid) })));
  }

  /** A compact JWS for one delivery attempt (a fresh jti each call). */
  async sign(claims: NotificationClaims, now = this.clock()): Promise<string> {
    const { kid } = this.active;
    const iat = Math.floor(now / 1000);
    return new SignJWT({
      taskId: claims.taskId,
      notificationId: claims.notificationId,
      request_body_sha256: bodySha256(claims.body),
    })
      .setProtectedHeader({ alg: 'ES256', kid, typ: 'JWT' })
      .setIssuer(this.opts.issuer)
      .setAudience(claims.aud)
      .setIssuedAt(iat)
      .setExpirationTime(iat + this.lifetimeS)
      .setJti(randomUUID())
      .sign(await this.cryptoKey(kid));
  }

  private published(k: StoredKey, now: number): boolean {
    return k.retiredAt === undefined || now < k.retiredAt + this.keepMs;
  }

  private async cryptoKey(kid: string): Promise<CryptoKey | Uint8Array> {
    let key = this.cryptoKeys.get(kid);
    if (!key) {
      const jwk = this.keys.find((k) => k.kid === kid)?.privateJwk;
      key = await importJWK({ ...jwk, alg: 'ES256' }, 'ES256');
      this.cryptoKeys.set(kid, key);
    }
    return key;
  }

  private async load(force: boolean): Promise<boolean> {
    // Taken before reading, so a change made while we read shows up as a change next time.
    const names = (await readdir(this.dir)).filter(isKeyFile).sort();
    const stats = await Promise.all(names.map((n) => stat(join(this.dir, n)).catch(() => undefined)));
    const seen = names.map((n, i) => `${n}:${stats[i]?.ino}:${stats[i]?.mtimeMs}`).join('|');
    if (!force && seen === this.seen) return false;
    const keys = await readKeys(this.dir);
    if (!pickActive(keys)) {
      await generateKey(this.dir, this.clock());
      return this.load(true);
    }
    this.keys = keys;
    this.active = pickActive(keys) as StoredKey;
    for (const kid of this.cryptoKeys.keys())
      if (!keys.some((k) => k.kid === kid)) this.cryptoKeys.delete(kid);
    this.seen = seen;
    return true;
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn);
    this.queue = run.catch(() => undefined);
    return run;
  }
}
