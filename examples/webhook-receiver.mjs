// A webhook receiver that checks taskhandle's push notifications the way a peer agent should:
// verify the signature against the agent's published keys, check that the body is the one signed,
// and drop repeats by notification id (delivery is at least once).
//
//   AGENT_URL=http://127.0.0.1:41241 PORT=8787 node examples/webhook-receiver.mjs
//
// Settings (environment):
//   AGENT_URL  the agent's base URL, as it signs it (`iss`, its PUBLIC_URL if it has one); its keys are
//              fetched from AGENT_URL/.well-known/jwks.json. Default http://127.0.0.1:41241.
//   PORT       the port to listen on, on 127.0.0.1 (0: any free one). Default 8787.
//
// It prints one JSON line per notification and answers:
//   204  verified (a repeat too: it was delivered before);
//   401  the signature, the body or the id does not verify: the agent dead-letters it, as it should;
//   503  with Retry-After, when the keys could not be had (the agent unreachable, its JWKS not served,
//        or a key newer than the set fetched moments ago): the agent retries, so nothing is lost
//        while the agent's address is unreachable from here.
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { createRemoteJWKSet, jwtVerify } from 'jose';

const agent = process.env.AGENT_URL ?? 'http://127.0.0.1:41241';
const port = Number(process.env.PORT ?? 8787);
const jwksUrl = new URL('/.well-known/jwks.json', agent);
// After a fetch, the set is not fetched again for this long, even for a key it has not seen.
const COOLDOWN_MS = 30_000;
// Fetched once and cached; fetched again when a token names a key it has not seen (a rotation).
const remoteKeys = createRemoteJWKSet(jwksUrl, { cooldownDuration: COOLDOWN_MS });
const seen = new Set();

/** The keys could not be had: not the sender's fault, so the sender should try again later. */
class KeysUnavailable extends Error {}
/** The keys are here, and this token names none of them (or an algorithm they do not use). */
const NO_FIT = new Set([
  'ERR_JWKS_NO_MATCHING_KEY',
  'ERR_JWKS_MULTIPLE_MATCHING_KEYS',
  'ERR_JOSE_NOT_SUPPORTED',
]);

/**
 * What a failure to get the keys may carry: jose's errors a code, a failed fetch its cause.
 * @typedef {{ code?: string, message?: string, cause?: { code?: string, message?: string } }} KeysFailure
 */

/**
 * The agent's keys, telling "could not get them" (503) from "none of them fits this token" (401).
 * @type {import('jose').JWTVerifyGetKey}
 */
async function keys(header, token) {
  const coolingDown = remoteKeys.coolingDown;
  try {
    return await remoteKeys(header, token);
  } catch (thrown) {
    const err = /** @type {KeysFailure} */ (thrown);
    if (err?.code === 'ERR_JWKS_NO_MATCHING_KEY' && coolingDown) {
      // Maybe a key the agent rotated to since our fetch: only the next fetch, after the cooldown, tells.
      throw new KeysUnavailable(
        `no key ${header.kid} in the set fetched less than ${COOLDOWN_MS / 1000} s ago`,
      );
    }
    if (NO_FIT.has(err?.code ?? '')) throw err;
    // A network error, a timeout, an answer other than 200, or not a key set.
    const cause = err?.cause?.code ?? err?.cause?.message;
    throw new KeysUnavailable(
      `cannot fetch ${jwksUrl}: ${err?.message ?? thrown}${cause ? ` (${cause})` : ''}`,
    );
  }
}

const server = createServer(async (req, res) => {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const body = Buffer.concat(chunks).toString('utf8');
  const id = req.headers['x-a2a-notification-id'];
  try {
    const { payload } = await jwtVerify(String(req.headers['x-a2a-notification-signature']), keys, {
      issuer: agent,
      // The URL you registered (without its #fragment): behind a proxy, write it out instead.
      audience: `http://${req.headers.host}${req.url}`,
    });
    const sha256 = createHash('sha256').update(body, 'utf8').digest('hex');
    if (payload.request_body_sha256 !== sha256) throw new Error('the body is not the one that was signed');
    if (payload.notificationId !== id) throw new Error('the id header is not the one that was signed');
  } catch (err) {
    const unavailable = err instanceof KeysUnavailable;
    const status = unavailable ? 503 : 401;
    const error = err instanceof Error ? err.message : String(err);
    console.log(JSON.stringify({ verified: false, status, id, error }));
    res.writeHead(status, unavailable ? { 'Retry-After': String(COOLDOWN_MS / 1000) } : {}).end();
    return;
  }
  res.writeHead(204).end();
  const repeat = seen.has(id);
  seen.add(id);
  const token = req.headers['x-a2a-notification-token'];
  console.log(JSON.stringify({ verified: true, repeat, id, token, body: JSON.parse(body) }));
});
server.listen(port, '127.0.0.1', () => {
  const { port: listening } = /** @type {import('node:net').AddressInfo} */ (server.address());
  console.log(JSON.stringify({ listening: `http://127.0.0.1:${listening}`, agent }));
});
