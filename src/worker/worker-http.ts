/** Calls to the worker routes (`/v1/workers/...`) with Node's fetch, and their problem documents. */

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

/** The request never got an answer (refused connection, reset, DNS): worth trying again later. */
export const isNetworkError = (err: unknown): boolean =>
  err instanceof TypeError && (err.message === 'fetch failed' || err.cause !== undefined);

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

/** The worker routes of one server, called with one set of credentials. */
export class WorkerHttp {
  readonly #base: string;
  readonly #auth: Record<string, string>;

  constructor(url: string, credentials: Credentials) {
    this.#base = `${url.replace(/\/+$/, '')}/v1/workers`;
    this.#auth = {
      ...(credentials.apiKey ? { 'X-API-Key': credentials.apiKey } : {}),
      ...(credentials.token ? { Authorization: `Bearer ${credentials.token}` } : {}),
    };
  }

  /** The answer's JSON; a refusal throws a {@link ProblemError}, a network failure fetch's TypeError. */
  async call<T>(c: Call): Promise<T> {
    const method = c.method ?? 'POST';
    const streamed = c.raw !== undefined && typeof c.raw !== 'string' && !(c.raw instanceof Uint8Array);
    const res = await fetch(this.#base + c.path, {
      method,
      headers: {
        Accept: 'application/json',
        ...this.#auth,
        ...(c.json !== undefined ? { 'Content-Type': 'application/json' } : {}),
        ...(c.leaseToken ? { 'Lease-Token': c.leaseToken } : {}),
        ...c.headers,
      },
      body: c.json !== undefined ? JSON.stringify(c.json) : c.raw,
      // A streamed body needs it (fetch sends it as it is read, chunked); harmless otherwise.
      ...(streamed ? { duplex: 'half' as const } : {}),
      signal: c.signal ?? null,
    });
    const text = await res.text();
    if (!res.ok) throw problemOf(res, text, `${method} /v1/workers${c.path}`);
    return (text ? JSON.parse(text) : {}) as T;
  }
}

function problemOf(res: Response, text: string, what: string): ProblemError {
  let problem: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null) problem = parsed as Record<string, unknown>;
  } catch {
    // Not JSON (a proxy's error page): the status says what there is to say.
  }
  const detail =
    typeof problem.detail === 'string' ? problem.detail : `the server answered ${res.status} to ${what}`;
  const reason = typeof problem.reason === 'string' ? problem.reason : undefined;
  return new ProblemError(detail, res.status, reason, problem);
}
