import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { calculateJwkThumbprint, FlattenedSign, type JWK } from 'jose';
import type { Logger } from 'pino';
import { ConfigError } from '../config/error.js';
import type { Config } from '../config/settings.js';
import { CARD_ALGORITHMS, type CardSigner } from '../faces/a2a/card-signature.js';
import { SigningKeys } from '../push/signing-keys.js';

/** Where the agent card's public keys are served: `jku` of every card signature. */
export const CARD_JWKS_PATH = '/.well-known/agent-card-jwks.json';

/**
 * The keys that sign the agent card, kept apart from the webhook keys (docs/SECURITY.md says why):
 * generated ES256 keys in `KEYS_DIR/card/`, or the operator's own in CARD_SIGNING_KEY_FILE.
 */
export interface CardKeys {
  /** Every key that signs the card now (each signs it: a rotation leaves several), the active first. */
  signers(): readonly CardSigner[];
  /** The public keys peers verify with (those of `signers()`). */
  jwks(): { keys: JWK[] };
  /** Rereads the keys (a rotation by another process, a replaced file); true if the signers changed. */
  reload(): Promise<boolean>;
}

/** The directory of the generated card keys: beside the webhook keys, shared by every instance as they are. */
export const cardKeysDir = (keysDir: string): string => join(keysDir, 'card');

/** The card's keys as the settings say, or undefined when CARD_SIGNING is false. */
export async function openCardKeys(config: Config, logger: Logger): Promise<CardKeys | undefined> {
  if (config.CARD_SIGNING === 'false') return undefined;
  const file = config.CARD_SIGNING_KEY_FILE;
  if (file !== undefined) {
    const keys = new FileCardKeys(file, logger);
    await keys.reload().catch((err: Error) => {
      throw new ConfigError(`CARD_SIGNING_KEY_FILE=${file}: ${err.message}`);
    });
    return keys;
  }
  const dir = cardKeysDir(config.keysDir);
  const store = await SigningKeys.open(dir, {
    issuer: 'agent-card',
    // A retired key stays published, and goes on signing the card, this long after a rotation.
    maxTokenLifetimeMs: config.CARD_KEY_OVERLAP_MS,
    logger,
  }).catch((err: Error) => {
    throw new ConfigError(
      `KEYS_DIR=${config.keysDir}: cannot use the card signing keys in ${dir} (${err.message})`,
    );
  });
  const keys = new GeneratedCardKeys(store);
  await keys.reload();
  return keys;
}

class GeneratedCardKeys implements CardKeys {
  #signers: CardSigner[] = [];
  #jwks: { keys: JWK[] } = { keys: [] };
  constructor(readonly store: SigningKeys) {}

  signers = () => this.#signers;
  jwks = () => this.#jwks;

  async reload(): Promise<boolean> {
    await this.store.reload();
    await this.store.prune();
    const signers = (await this.store.publishedSigners()).map((s) => ({ ...s, alg: 'ES256' }));
    const changed = kidsOf(signers) !== kidsOf(this.#signers);
    this.#signers = signers;
    this.#jwks = this.store.jwks();
    return changed;
  }
}

const kidsOf = (signers: readonly CardSigner[]) => signers.map((s) => s.kid).join(' ');

/**
 * The operator's own key(s): a PEM private key (PKCS#8, SEC1 or PKCS#1), a private JWK, or a JWK Set
 * of them, every one of which signs (two while the operator rolls one over). Reread when the file
 * changes; a file that cannot be read then keeps the keys it had, and says so in the log.
 */
class FileCardKeys implements CardKeys {
  #signers: CardSigner[] = [];
  #jwks: { keys: JWK[] } = { keys: [] };
  #seen = '';
  constructor(
    readonly file: string,
    readonly logger: Logger,
  ) {}

  signers = () => this.#signers;
  jwks = () => this.#jwks;

  async reload(): Promise<boolean> {
    const s = await stat(this.file);
    const seen = `${s.ino}:${s.mtimeMs}:${s.size}`;
    if (seen === this.#seen) return false;
    const first = this.#seen === '';
    try {
      const keys = await Promise.all(privateKeysOf(await readFile(this.file, 'utf8')).map(signerOf));
      if (new Set(keys.map((k) => k.signer.kid)).size !== keys.length)
        throw new Error('two keys have the same kid: give each its own');
      this.#signers = keys.map((k) => k.signer);
      this.#jwks = { keys: keys.map((k) => k.jwk) };
      this.#seen = seen;
      return true;
    } catch (err) {
      if (first) throw err;
      this.#seen = seen;
      this.logger.error(
        { err, file: this.file },
        'agent card: CARD_SIGNING_KEY_FILE cannot be read; the card stays signed with the keys it had',
      );
      return false;
    }
  }
}

type KeySource = { key: KeyObject; kid?: string; alg?: string };

function privateKeysOf(text: string): KeySource[] {
  if (text.trimStart().startsWith('-----BEGIN')) return [{ key: createPrivateKey(text) }];
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error('not a PEM private key and not JSON (a private JWK or a JWK Set)');
  }
  const jwks = (json as { keys?: unknown }).keys;
  const list = Array.isArray(jwks) ? jwks : [json];
  if (list.length === 0) throw new Error('the JWK Set holds no key');
  return list.map((jwk: JWK) => {
    if (typeof jwk !== 'object' || jwk === null || typeof jwk.d !== 'string')
      throw new Error('every JWK must be a private key (with its "d" member)');
    const key = createPrivateKey({ key: jwk as import('node:crypto').JsonWebKey, format: 'jwk' });
    return { key, kid: jwk.kid, alg: jwk.alg };
  });
}

/** The algorithm a key signs with when its JWK names none: what its type and curve allow. */
function algOf(key: KeyObject): string {
  const { asymmetricKeyType: type, asymmetricKeyDetails: d } = key;
  if (type === 'ec') {
    const alg = { prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' }[d?.namedCurve ?? ''];
    if (alg) return alg;
    throw new Error(`EC curve ${d?.namedCurve} is not one JWS uses (P-256, P-384, P-521)`);
  }
  if (type === 'ed25519') return 'EdDSA';
  if (type === 'rsa') return 'RS256';
  if (type === 'rsa-pss') return 'PS256';
  throw new Error(`a ${type} key cannot sign an agent card: use EC (P-256), Ed25519 or RSA`);
}

async function signerOf(source: KeySource): Promise<{ signer: CardSigner; jwk: JWK }> {
  const alg = source.alg ?? algOf(source.key);
  if (!CARD_ALGORITHMS.includes(alg))
    throw new Error(`alg ${alg} is not one of ${CARD_ALGORITHMS.join(', ')}`);
  const exported = createPublicKey(source.key).export({ format: 'jwk' }) as Record<string, unknown>;
  // Picked, not copied: no private member of a JWK can reach the published set.
  const pub: JWK = Object.fromEntries(
    ['kty', 'crv', 'x', 'y', 'n', 'e'].filter((m) => exported[m] !== undefined).map((m) => [m, exported[m]]),
  );
  // A JWK's `alg` that does not fit its key would fail every signing: refused now, naming it.
  await new FlattenedSign(new Uint8Array(1))
    .setProtectedHeader({ alg })
    .sign(source.key)
    .catch((err: Error) => {
      throw new Error(`alg ${alg} does not fit a ${source.key.asymmetricKeyType} key (${err.message})`);
    });
  const kid = source.kid ?? (await calculateJwkThumbprint(pub));
  return { signer: { kid, alg, key: source.key }, jwk: { ...pub, kid, alg, use: 'sig' } };
}
