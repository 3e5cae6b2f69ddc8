import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction as NetLookupFunction } from 'node:net';
import {
  type AddressPolicy,
  addressRefusal,
  checkWebhookUrl,
  howToAllow,
  isAllowedHost,
} from './address-policy.js';

/**
 * A resolver in the `dns.lookup(host, { all: true }, cb)` shape. The client always asks for every
 * address so that it can check all of them; tests inject one to simulate DNS rebinding.
 */
export type LookupFunction = (
  hostname: string,
  options: LookupAllOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

export type WebhookResult =
  | { ok: true; status: number }
  | {
      ok: false;
      status?: number;
      error: string;
      retryable: boolean;
      /** The host name did not resolve (no such name, or no answer): a bounded number of tries only. */
      unresolved?: true;
      /** The address policy refused the URL or the address its name resolved to. */
      refused?: true;
      /** How long the receiver asked to be left alone (its `Retry-After`, on a retryable answer). */
      retryAfterMs?: number;
    };

export interface WebhookRequest {
  url: URL;
  headers: Record<string, string>;
  body: string;
  /** Covers the whole exchange: DNS, connect, TLS, request and response. */
  timeoutMs: number;
  policy: AddressPolicy;
  lookup?: LookupFunction;
}

// Enough to see a receiver's answer end; anything longer is discarded by closing the socket.
const MAX_RESPONSE_BYTES = 64 * 1024;
const REFUSED = 'ERR_WEBHOOK_ADDRESS_REFUSED';
// What dns.lookup (getaddrinfo) fails with when a name has no address: no such name, no data, or a
// failure the resolver calls permanent. Not EAI_AGAIN: a resolver that is down for a while must not
// dead-letter every notification to a named webhook; those are retried until PUSH_MAX_AGE_MS.
const UNRESOLVED = new Set(['ENOTFOUND', 'EAI_FAIL', 'EAI_NODATA', 'ENODATA', 'EAI_NONAME']);

/**
 * POSTs one webhook. Never throws and never follows redirects; the destination address is checked
 * against `policy` at connect time, so a host name that resolves to a private address is refused
 * even if it resolved to a public one when the config was created.
 *
 * @example
 *   const r = await postWebhook({ url, headers: { 'content-type': 'application/json' }, body,
 *     timeoutMs: 10_000, policy });
 *   if (!r.ok && r.retryable) scheduleRetry();
 */
export async function postWebhook(req: WebhookRequest): Promise<WebhookResult> {
  // Checked again here, not only at config creation: the policy may have changed since, and a
  // literal-IP host never reaches the lookup below (Node connects to it directly).
  const checked = checkWebhookUrl(req.url.href, req.policy);
  if ('reason' in checked)
    return { ok: false, error: `webhook URL refused: ${checked.reason}`, retryable: false, refused: true };
  const url = checked.url;

  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (name.toLowerCase() !== 'content-length') headers[name] = value;
  }
  headers['content-length'] = String(Buffer.byteLength(req.body));

  return new Promise<WebhookResult>((resolve) => {
    let outgoing: ReturnType<typeof httpRequest> | undefined;
    let result: WebhookResult | undefined; // decided by the status line; the body is only drained
    let done = false;
    const finish = (fallback: WebhookResult): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      // Frees the socket whether we stopped early (cap, timeout) or the exchange is complete.
      outgoing?.destroy();
      resolve(result ?? fallback);
    };
    const timer = setTimeout(
      () => finish({ ok: false, error: `timeout after ${req.timeoutMs} ms`, retryable: true }),
      req.timeoutMs,
    );

    const onResponse = (res: IncomingMessage): void => {
      const decided = classifyStatus(res.statusCode ?? 0, res.headers.location, res.headers['retry-after']);
      result = decided;
      let read = 0;
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_RESPONSE_BYTES) finish(decided);
      });
      res.on('end', () => finish(decided));
      res.on('error', () => finish(decided));
      res.on('close', () => finish(decided));
    };

    try {
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
      outgoing = send(
        url,
        {
          method: 'POST',
          headers,
          // A fresh connection per delivery: a pooled keep-alive socket is keyed by host:port only,
          // so it could carry a request past the address check (a different policy, or a name that
          // has since been re-pointed). Webhooks are rare enough that the extra handshake is cheap.
          agent: false,
          lookup: guardedLookup(url.hostname, req.policy, req.lookup ?? (dnsLookup as LookupFunction)),
        },
        onResponse,
      );
    } catch (err) {
      // Invalid header names/values throw synchronously; retrying will not fix them.
      finish({ ok: false, error: describeError(err), retryable: false });
      return;
    }
    outgoing.on('error', (err: NodeJS.ErrnoException) => {
      const error = describeError(err);
      const unresolved = err.code !== undefined && UNRESOLVED.has(err.code);
      const refused = err.code === REFUSED;
      finish({
        ok: false,
        error,
        retryable: !refused,
        ...(unresolved ? { unresolved } : {}),
        ...(refused ? { refused } : {}),
      });
    });
    outgoing.end(req.body);
  });
}

function classifyStatus(
  status: number,
  location: string | undefined,
  retryAfter: string | undefined,
): WebhookResult {
  if (status >= 200 && status < 300) return { ok: true, status };
  if (status >= 300 && status < 400) {
    // Following would let a public receiver bounce us to an internal address.
    const to = location === undefined ? '' : ` to ${location}`;
    return { ok: false, status, error: `redirect refused: ${status}${to}`, retryable: false };
  }
  const retryable = status === 408 || status === 425 || status === 429 || status >= 500;
  const wait = retryable ? retryAfterMs(retryAfter) : undefined;
  return {
    ok: false,
    status,
    error: `receiver answered ${status}`,
    retryable,
    ...(wait === undefined ? {} : { retryAfterMs: wait }),
  };
}

/**
 * A `Retry-After` (RFC 9110 10.2.3: seconds, or an HTTP date) as milliseconds from `now`; undefined
 * when absent or unreadable (the backoff alone decides then).
 *
 * @example retryAfterMs('120') // 120000
 */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (/^\d{1,10}$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * Wraps a resolver so that every address Node may connect to is checked first. This is the
 * address actually used for the socket, so DNS rebinding between checks cannot slip through.
 */
function guardedLookup(urlHost: string, policy: AddressPolicy, resolve: LookupFunction): NetLookupFunction {
  const hostAllowed = isAllowedHost(urlHost, policy);
  return (hostname, options, callback) => {
    if (!hostAllowed && !policy.publicAllowed) {
      const error = new Error(
        `address refused: ${hostname} is not on the push allow-list (public addresses are closed)`,
      );
      return callback(Object.assign(error, { code: REFUSED }), options.all ? [] : '');
    }
    const { family, hints } = options;
    resolve(hostname, { family, hints, all: true }, (err, addresses) => {
      const first = addresses?.[0];
      const failure = err ?? refuseResolved(hostname, addresses, hostAllowed ? undefined : policy);
      if (failure || first === undefined)
        return callback(failure ?? noAddress(hostname), options.all ? [] : '');
      // Node 20 asks for { all: true } when autoSelectFamily is on and then expects an array back;
      // otherwise it expects (err, address, family).
      if (options.all) return callback(null, addresses);
      return callback(null, first.address, first.family);
    });
  };
}

/** Refuses the whole connection if any address is refused: Node may fall back to any of them. */
function refuseResolved(
  hostname: string,
  addresses: LookupAddress[],
  policy: AddressPolicy | undefined,
): NodeJS.ErrnoException | undefined {
  if (addresses.length === 0) return noAddress(hostname);
  if (policy === undefined) return undefined;
  for (const { address } of addresses) {
    const refused = addressRefusal(address, policy);
    if (refused !== undefined) {
      // Said to the operator (logs, dead letters): listing the name opens every address it resolves to.
      const advice = refused.openable ? `; ${howToAllow(hostname)}` : '';
      return Object.assign(
        new Error(`address refused: ${refused.reason} (resolved from ${hostname})${advice}`),
        { code: REFUSED },
      );
    }
  }
  return undefined;
}

function noAddress(hostname: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${hostname} resolved to no address`), { code: 'ENOTFOUND' });
}

function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as NodeJS.ErrnoException).code;
  // With autoSelectFamily a failed connect is an AggregateError whose own message is empty.
  const message =
    err.message || (err instanceof AggregateError ? err.errors.map((e) => describeError(e)).join('; ') : '');
  if (code === REFUSED) return message;
  return code !== undefined && !message.includes(code) ? `${code}: ${message}` : message || String(code);
}
