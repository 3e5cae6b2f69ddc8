/** Calls to the worker routes (`/v1/workers/...`) over node:http(s), and their problem documents. */

import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { pipeline } from 'node:stream/promises';

type Agent = HttpAgent | HttpsAgent;

/**
 * The server refused a request with a problem document (RFC 9457): `message` is its `detail`, which
 * says what to do. Branch on `status` and `reason` (`"lease-lost"` on a 409: the task is no longer
 * this worker's; stop working on it).
 *
 * @example
 * catch (err) { if (isProblemError(err) && err.reason === 'lease-lost') return; throw err; }
 */
export class ProblemError extends Error {
  override readonly name = 'ProblemError';
  constructor(
    message: string,
    /** The HTTP status. */
    readonly status: number,
    /** The problem's `reason` member, when it has one (e.g. `"lease-lost"`). */
    readonly reason: string | undefined,
    /** The whole problem document (or `{}` when the answer was not one). */
    readonly problem: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** Whether `err` is a {@link ProblemError} (by name, so that two copies of this module agree). */
export const isProblemError = (err: unknown): err is ProblemError =>
  typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'ProblemError';

/** The server says the lease no longer holds the task. */
export const isLeaseLost = (err: unknown): boolean =>
  isProblemError(err) && err.status === 409 && err.reason === 'lease-lost';

/**
 * The request never got an answer (refused connection, reset, DNS, the connection closed mid-answer):
 * worth trying again later. Its `cause` is the socket's error.
 */
export class NetworkError extends Error {
  override readonly name = 'NetworkError';
}

/** The request never got an answer: worth trying again later. */
export const isNetworkError = (err: unknown): boolean => err instanceof NetworkError;

export interface Credentials {
  apiKey?: string | undefined;
  token?: string | undefined;
}

export interface Call {
  method?: 'POST' | 'PUT';
  /** Under /v1/workers, e.g. `/claims`. */
  path: string;
  /** Sent as JSON; a `raw` body is sent as it is instead. */
  json?: unknown;
  raw?: string | Uint8Array | AsyncIterable<Uint8Array>;
  headers?: Record<string, string>;
  leaseToken?: string;
  signal?: AbortSignal | undefined;
}

/**
 * The worker routes of one server, called with one set of credentials, over node:http(s) on
 * keep-alive connections of its own. Not fetch: a no-op job's claim share and complete cost the
 * worker process about 1 ms of CPU through fetch (its Request, Headers, web streams and the
 * AbortSignal each call makes) and a quarter of that through node:http, on the same cores as the
 * server it works for (bench/BENCHMARKS.md, remote worker).
 */
export class WorkerHttp {
  readonly #base: URL;
  readonly #path: string;
  readonly #auth: Record<string, string>;
  readonly #agent: Agent;
  readonly #request: typeof httpRequest;

  constructor(url: string, credentials: Credentials) {
    this.#base = new URL(url);
    if (this.#base.protocol !== 'http:' && this.#base.protocol !== 'https:') {
      throw new RangeError(`runWorker: url must be an http: or https: URL; got ${JSON.stringify(url)}`);
    }
    const https = this.#base.protocol === 'https:';
    this.#path = `${this.#base.pathname.replace(/\/+$/, '')}/v1/workers`;
    this.#auth = {
      ...(credentials.apiKey ? { 'X-API-Key': credentials.apiKey } : {}),
      ...(credentials.token ? { Authorization: `Bearer ${credentials.token}` } : {}),
    };
    // Keep-alive: the server's `Keep-Alive: timeout` hint is heeded, so an idle socket is dropped before
    // the server would close it under a request.
    this.#agent = https ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
    this.#request = https ? httpsRequest : httpRequest;
  }

  /**
   * The answer's JSON. A refusal throws a {@link ProblemError}, a request without an answer a
   * {@link NetworkError}, an aborted `signal` its reason, a `raw` body that throws its error.
   */
  async call<T>(c: Call): Promise<T> {
    const method = c.method ?? 'POST';
    const what = `${method} /v1/workers${c.path}`;
    const body = c.json !== undefined ? JSON.stringify(c.json) : c.raw;
    const whole = body === undefined || typeof body === 'string' || body instanceof Uint8Array;
    const headers: Record<string, string> = {
      Accept: 'application/json',
      ...this.#auth,
      ...(c.json !== undefined ? { 'Content-Type': 'application/json' } : {}),
      ...(c.leaseToken ? { 'Lease-Token': c.leaseToken } : {}),
      ...c.headers,
      // A streamed body goes chunked, as it is read.
      ...(whole ? { 'Content-Length': String(body === undefined ? 0 : Buffer.byteLength(body)) } : {}),
    };
    let bodyError: { err: unknown } | undefined;
    let answer: { status: number; text: string };
    try {
      answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = this.#request(
          {
            protocol: this.#base.protocol,
            hostname: this.#base.hostname,
            port: this.#base.port,
            path: this.#path + c.path,
            method,
            headers,
            agent: this.#agent,
            ...(c.signal ? { signal: c.signal } : {}),
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.once('end', () => {
              // Answered before the whole body went (a refusal mid-upload): send no more of it.
              if (!req.writableFinished) req.destroy();
              resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
            });
            res.once('error', reject);
          },
        );
        req.once('error', reject);
        if (whole) req.end(body);
        else {
          const read = async function* (source: AsyncIterable<Uint8Array>) {
            try {
              yield* source;
            } catch (err) {
              bodyError = { err };
              throw err;
            }
          };
          // Its failure reaches the request (pipeline destroys it with the error): told there, once.
          pipeline(read(body as AsyncIterable<Uint8Array>), req).catch(() => {});
        }
      });
    } catch (err) {
      if (c.signal?.aborted) throw c.signal.reason;
      if (bodyError) throw bodyError.err;
      throw new NetworkError(`${what}: no answer from ${this.#base.origin} (${(err as Error).message})`, {
        cause: err,
      });
    }
    const { status, text } = answer;
    if (status < 200 || status > 299) throw problemOf(status, text, what);
    return (text ? JSON.parse(text) : {}) as T;
  }

  /** Closes the idle connections (the worker has stopped). */
  close(): void {
    this.#agent.destroy();
  }
}

function problemOf(status: number, text: string, what: string): ProblemError {
  let problem: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null) problem = parsed as Record<string, unknown>;
  } catch {
    // Not JSON (a proxy's error page): the status says what there is to say.
  }
  const detail =
    typeof problem.detail === 'string' ? problem.detail : `the server answered ${status} to ${what}`;
  const reason = typeof problem.reason === 'string' ? problem.reason : undefined;
  return new ProblemError(detail, status, reason, problem);
}
