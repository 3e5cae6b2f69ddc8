import { createLocalJWKSet, type JSONWebKeySet } from 'jose';
import { checkCardSignatures, type SignatureCheck } from '../faces/a2a/card-signature.js';
import { CliError, EXIT } from './exit-codes.js';

/** Larger answers are not a card or a key set: refused before they are parsed. */
const MAX_BYTES = 1024 * 1024;
const TIMEOUT_MS = 10_000;

export interface VerifyInput {
  /** The card's URL (a `.json` path), or the agent's base URL (then its /.well-known/agent-card.json). */
  url: string;
  /** The A2A-Version the card is fetched with: each version's card is signed on its own. */
  version: string;
  /** A key set to trust instead of the one each signature's `jku` names. */
  jwks?: string;
}

export interface VerifyResult {
  cardUrl: string;
  checks: SignatureCheck[];
  verified: boolean;
}

/**
 * `taskhandle card verify URL`: fetches the card, canonicalizes it without `signatures` (RFC 8785),
 * finds each signature's key through its `jku` and `kid`, and checks it. A `jku` off the card's own
 * origin is not followed (whoever could change the card could name their own keys there): give
 * `--jwks` to trust another key set. Verified when at least one signature verifies (spec 8.4.3).
 */
export async function verifyCardAt(o: VerifyInput): Promise<VerifyResult> {
  const cardUrl = cardUrlOf(o.url);
  const card = await fetchJson(cardUrl, 'the card', { 'A2A-Version': o.version });
  if (typeof card !== 'object' || card === null || Array.isArray(card))
    throw new CliError(EXIT.refused, `${cardUrl} answered JSON that is not an agent card (an object)`);
  const sets = new Map<string, Promise<ReturnType<typeof createLocalJWKSet>>>();
  const keySet = (url: string) => {
    let set = sets.get(url);
    if (!set) {
      set = fetchJson(url, 'the key set').then((jwks) => createLocalJWKSet(jwks as JSONWebKeySet));
      sets.set(url, set);
    }
    return set;
  };
  const origin = new URL(cardUrl).origin;
  const checks = await checkCardSignatures(card as Record<string, unknown>, async (header) => {
    let from = o.jwks;
    if (from === undefined) {
      if (typeof header.jku !== 'string')
        throw new Error('its protected header names no jku: give --jwks URL');
      const jku = new URL(header.jku, cardUrl);
      if (jku.origin !== origin)
        throw new Error(
          `its jku ${jku.href} is not on the card's origin ${origin}: not followed; give --jwks URL to trust that key set`,
        );
      from = jku.href;
    }
    try {
      return await (await keySet(from))(header);
    } catch (err) {
      if ((err as { code?: string }).code !== 'ERR_JWKS_NO_MATCHING_KEY') throw err;
      throw new Error(
        `key ${header.kid} (${header.alg}) is not in the key set at ${from}: rotated out, or never this agent's`,
      );
    }
  });
  return { cardUrl, checks, verified: checks.some((c) => c.ok) };
}

function cardUrlOf(given: string): string {
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw new CliError(EXIT.usage, `not a URL: ${given}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new CliError(EXIT.usage, `not an http(s) URL: ${given}`);
  // An agent's base URL (also one mounted under a path, http://host/agent): its card.
  if (!url.pathname.endsWith('.json'))
    url.pathname = `${url.pathname.replace(/\/+$/, '')}/.well-known/agent-card.json`;
  return url.href;
}

async function fetchJson(url: string, what: string, headers: Record<string, string> = {}): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, {
      headers: { Accept: 'application/json', ...headers },
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (err) {
    throw new CliError(EXIT.connection, `${what} at ${url} could not be fetched (${(err as Error).message})`);
  }
  if (!res.ok) throw new CliError(EXIT.refused, `${what} at ${url} answered HTTP ${res.status}`);
  const declared = Number(res.headers.get('content-length') ?? 0);
  const text = declared > MAX_BYTES ? undefined : await res.text();
  if (text === undefined || Buffer.byteLength(text) > MAX_BYTES)
    throw new CliError(EXIT.refused, `${what} at ${url} is larger than ${MAX_BYTES} bytes`);
  try {
    return JSON.parse(text);
  } catch {
    throw new CliError(EXIT.refused, `${what} at ${url} is not JSON`);
  }
}

/** The lines `card verify` prints: one per signature, then the outcome. */
export function describeChecks(r: VerifyResult): string[] {
  if (r.checks.length === 0) return [`${r.cardUrl}: the card has no signatures`];
  const lines = r.checks.map((c, i) =>
    c.ok
      ? `signature ${i + 1}: verified by key ${c.kid} (${c.alg}) from ${c.jku ?? 'the given key set'}`
      : `signature ${i + 1}: not verified${c.kid ? ` (key ${c.kid})` : ''}: ${c.reason}`,
  );
  const ok = r.checks.filter((c) => c.ok).length;
  lines.push(
    r.verified
      ? `${r.cardUrl}: verified (${ok} of ${r.checks.length} signatures)`
      : `${r.cardUrl}: NOT verified: no signature verifies`,
  );
  return lines;
}
