import type { KeyObject } from 'node:crypto';
import canonicalize from 'canonicalize';
import {
  base64url,
  type CryptoKey,
  decodeProtectedHeader,
  FlattenedSign,
  flattenedVerify,
  type JWK,
  type JWSHeaderParameters,
} from 'jose';

/**
 * Agent card signatures (A2A v1.0, section 8.4): each is a detached JWS (RFC 7515) whose payload is
 * the RFC 8785 (JCS) canonical form of the card without its `signatures`, as it is served. The
 * served cards are built in the form section 8.4.1's presence rules give (agent-card.ts), so a
 * verifier that first drops default values gets the same bytes as one that canonicalizes what it
 * received. docs/SECURITY.md shows a peer's verification in a few lines of jose.
 */
export interface AgentCardSignature {
  /** The base64url protected header: `alg`, `typ` (`JOSE`), `kid`, `jku`. */
  protected: string;
  /** The base64url signature over `protected` + `.` + the base64url canonical card. */
  signature: string;
  /** The unprotected header; we set none. */
  header?: Record<string, unknown>;
}

/** One key that signs the card: its id (published in the JWKS at `jku`) and algorithm. */
export interface CardSigner {
  kid: string;
  alg: string;
  key: CryptoKey | KeyObject | Uint8Array;
}

/** The algorithms a card may be signed with: asymmetric only (a peer verifies with a public key). */
export const CARD_ALGORITHMS = ['ES256', 'ES384', 'ES512', 'EdDSA', 'RS256', 'PS256'];

/** The JCS canonical form of `card` without `signatures`: the JWS payload (spec 8.4.1). */
export function cardPayload(card: Record<string, unknown>): string {
  const { signatures: _, ...rest } = card;
  const text = canonicalize(rest);
  if (text === undefined) throw new Error('the card has no JSON form');
  return text;
}

/** `card` with one signature per signer (the first the active key's), replacing any it had. */
export async function signCard<T extends Record<string, unknown>>(
  card: T,
  signers: readonly CardSigner[],
  jku: string,
): Promise<T & { signatures: AgentCardSignature[] }> {
  const payload = new TextEncoder().encode(cardPayload(card));
  const signatures = await Promise.all(
    signers.map(async ({ kid, alg, key }) => {
      const jws = await new FlattenedSign(payload)
        .setProtectedHeader({ alg, typ: 'JOSE', kid, jku })
        .sign(key);
      return { protected: jws.protected as string, signature: jws.signature };
    }),
  );
  return { ...card, signatures };
}

/** What checking one signature of a card found. */
export type SignatureCheck =
  | { ok: true; kid: string; alg: string; jku: string | undefined }
  | { ok: false; kid: string | undefined; jku: string | undefined; reason: string };

/**
 * Finds the public key one signature names: `header` is its protected header. Throws (with words
 * for the person verifying) when it cannot.
 */
export type KeyResolver = (header: JWSHeaderParameters) => Promise<CryptoKey | KeyObject | JWK | Uint8Array>;

/**
 * Checks every signature of `card` against the key `resolve` finds for it. A card with no
 * signatures gives no checks: the caller decides what an unsigned card means.
 */
export async function checkCardSignatures(
  card: Record<string, unknown>,
  resolve: KeyResolver,
): Promise<SignatureCheck[]> {
  const list = Array.isArray(card.signatures) ? (card.signatures as unknown[]) : [];
  const payload = base64url.encode(cardPayload(card));
  return Promise.all(list.map((entry) => checkOne(entry, payload, resolve)));
}

async function checkOne(entry: unknown, payload: string, resolve: KeyResolver): Promise<SignatureCheck> {
  const read = readSignature(entry);
  if ('reason' in read) return read;
  const { jws, header, kid, jku } = read;
  try {
    const key = await resolve(header);
    await flattenedVerify({ payload, ...jws }, key, { algorithms: CARD_ALGORITHMS });
    return { ok: true, kid, alg: header.alg, jku };
  } catch (err) {
    const reason =
      (err as { code?: string }).code === 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED'
        ? 'the signature does not match the card: the card was changed after it was signed, or signed with another key'
        : (err as Error).message;
    return { ok: false, kid, jku, reason };
  }
}

/**
 * A signature entry (its JWS without the payload) and its protected header, which must name a kid
 * and an alg; or why it is not one.
 */
function readSignature(
  entry: unknown,
):
  | { jws: AgentCardSignature; header: JWSHeaderParameters & { alg: string }; kid: string; jku?: string }
  | (SignatureCheck & { ok: false }) {
  const sig = entry as Partial<AgentCardSignature> | null;
  const refused = (reason: string, kid?: string, jku?: string) => ({ ok: false as const, kid, jku, reason });
  if (typeof sig?.protected !== 'string' || typeof sig.signature !== 'string')
    return refused('not a signature: needs protected and signature strings');
  let header: JWSHeaderParameters;
  try {
    header = decodeProtectedHeader({ protected: sig.protected });
  } catch {
    return refused('its protected header is not base64url JSON');
  }
  const kid = typeof header.kid === 'string' ? header.kid : undefined;
  const jku = typeof header.jku === 'string' ? header.jku : undefined;
  const { alg } = header;
  if (!kid || typeof alg !== 'string')
    return refused('its protected header names no kid or no alg', kid, jku);
  return {
    jws: { protected: sig.protected, signature: sig.signature, ...(sig.header && { header: sig.header }) },
    header: { ...header, alg },
    kid,
    jku,
  };
}
