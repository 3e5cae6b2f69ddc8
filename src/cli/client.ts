import { Readable } from 'node:stream';
import { createParser } from 'eventsource-parser';
import { CliError, EXIT, TASK_NOT_FOUND } from './exit-codes.js';

// biome-ignore lint/suspicious/noExplicitAny: agents' answers are read field by field, defensively
export type Json = Record<string, any>;

export interface ClientOptions {
  url: string;
  token?: string | undefined;
}

/** One SSE event of a streaming call: its id and the JSON-RPC `result`. */
export interface StreamEvent {
  id: string | undefined;
  result: Json;
}

/**
 * A minimal A2A v1.0 JSON-RPC client: what the commands need, and nothing server-specific, so it
 * works against any A2A agent. Failures are CliErrors carrying the exit code.
 *
 * @example
 *   const task = await new A2AClient({ url: 'http://127.0.0.1:41241' }).call('GetTask', { id });
 */
export class A2AClient {
  private readonly endpoint: string;
  private readonly token: string | undefined;
  private nextId = 1;

  constructor(o: ClientOptions) {
    this.endpoint = o.url;
    this.token = o.token;
  }

  private headers(accept: string, lastEventId?: string): Record<string, string> {
    return {
      'Content-Type': 'application/json',
      Accept: accept,
      'A2A-Version': '1.0',
      ...(this.token ? { Authorization: `Bearer ${this.token}` } : {}),
      ...(lastEventId !== undefined ? { 'Last-Event-ID': lastEventId } : {}),
    };
  }

  private async post(
    method: string,
    params: unknown,
    accept: string,
    lastEventId?: string,
    signal?: AbortSignal,
  ) {
    let res: Response;
    try {
      res = await fetch(this.endpoint, {
        method: 'POST',
        headers: this.headers(accept, lastEventId),
        body: JSON.stringify({ jsonrpc: '2.0', id: this.nextId++, method, params }),
        signal: signal ?? null,
      });
    } catch (err) {
      throw new CliError(EXIT.connection, `cannot reach ${this.endpoint}: ${causeOf(err)}`);
    }
    if (res.status === 502 || res.status === 503 || res.status === 504) {
      // A proxy in front of an agent that is restarting: as good as unreachable, and worth a retry.
      throw new CliError(EXIT.connection, `${res.status} from ${this.endpoint}: the agent is unavailable`);
    }
    if (res.status === 401 || res.status === 403) {
      const detail = await res.text().catch(() => '');
      throw new CliError(
        EXIT.auth,
        `${res.status} from ${this.endpoint}: ${res.status === 401 ? 'credentials missing or not accepted (--token, TASKHANDLE_TOKEN)' : 'not allowed'}${detail ? ` ${detail.slice(0, 200)}` : ''}`,
      );
    }
    return res;
  }

  /**
   * The error for an answer that is not JSON-RPC at all: --url points at something that is not an
   * A2A agent's JSON-RPC endpoint. The agent card at the URL's origin, when there is one, names the
   * endpoint to use instead.
   */
  private async notAnAgent(method: string, res: Response): Promise<CliError> {
    const type = (res.headers.get('content-type') ?? 'no content type').split(';')[0];
    const what = `${method}: ${this.endpoint} answered HTTP ${res.status} (${type}), not A2A JSON-RPC`;
    const cardUrl = new URL('/.well-known/agent-card.json', this.endpoint).href;
    let endpoint: string | undefined;
    try {
      const card = (await (await fetch(cardUrl, { signal: AbortSignal.timeout(3000) })).json()) as Json;
      const listed = (card.supportedInterfaces ?? []) as Json[];
      endpoint =
        listed.find((i) => i.protocolBinding === 'JSONRPC' && String(i.protocolVersion).startsWith('1'))
          ?.url ?? (card.preferredTransport === 'JSONRPC' ? card.url : undefined);
    } catch {
      // No card, or not JSON: the origin is not an A2A agent.
    }
    const next =
      endpoint === undefined
        ? `: no A2A agent card at ${cardUrl} either, so --url (or TASKHANDLE_URL) does not point at an A2A agent`
        : new URL(endpoint).href === new URL(this.endpoint).href
          ? `, though its agent card names this URL: the agent may be misconfigured`
          : `: its agent card names the JSON-RPC endpoint ${endpoint}; use --url ${endpoint}`;
    return new CliError(EXIT.refused, `${what}${next}`);
  }

  /**
   * A file the agent links (a large artifact), as a byte stream. The credentials go only to the
   * agent's own origin: a link elsewhere is refused rather than sent the token.
   */
  async download(url: string): Promise<Readable> {
    const target = new URL(url, this.endpoint);
    if (target.origin !== new URL(this.endpoint).origin) {
      throw new CliError(
        EXIT.refused,
        `the result links ${target.href}, not on this agent: fetch it yourself`,
      );
    }
    let res: Response;
    try {
      res = await fetch(target, {
        headers: this.token ? { Authorization: `Bearer ${this.token}` } : {},
      });
    } catch (err) {
      throw new CliError(EXIT.connection, `cannot reach ${target.origin}: ${(err as Error).message}`);
    }
    if (res.status === 401 || res.status === 403) {
      throw new CliError(
        EXIT.auth,
        `downloading ${target.pathname}: credentials refused (HTTP ${res.status})`,
      );
    }
    if (!res.ok || !res.body) {
      throw new CliError(EXIT.refused, `downloading ${target.pathname} failed: HTTP ${res.status}`);
    }
    return Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>);
  }

  /** A unary call: its `result`, or a CliError for a JSON-RPC error or an unexpected answer. */
  async call(method: string, params: unknown): Promise<Json> {
    const res = await this.post(method, params, 'application/json');
    const body = (await res.json().catch(() => undefined)) as Json | undefined;
    if (body?.jsonrpc !== '2.0') throw await this.notAnAgent(method, res);
    if (body.error) throw rpcError(method, body.error);
    if (!res.ok || body.result === undefined)
      throw new CliError(EXIT.refused, `${method}: HTTP ${res.status} without a result`);
    return body.result as Json;
  }

  /**
   * A streaming call (SubscribeToTask): yields each event until the server closes the stream.
   * A JSON-RPC error (as an event, or as a plain JSON answer) throws a CliError; a dropped
   * connection throws one with EXIT.connection, which a caller may retry with the last event id.
   */
  async *stream(
    method: string,
    params: unknown,
    lastEventId?: string,
    signal?: AbortSignal,
  ): AsyncGenerator<StreamEvent> {
    const res = await this.post(method, params, 'text/event-stream', lastEventId, signal);
    const type = res.headers.get('content-type') ?? '';
    if (!type.includes('text/event-stream')) {
      const body = (await res.json().catch(() => undefined)) as Json | undefined;
      if (body?.jsonrpc !== '2.0') throw await this.notAnAgent(method, res);
      if (body.error) throw rpcError(method, body.error);
      throw new CliError(EXIT.refused, `${method}: HTTP ${res.status}, not an event stream`);
    }
    if (!res.body) throw new CliError(EXIT.connection, `${method}: an empty answer`);
    const queue: StreamEvent[] = [];
    let failure: CliError | undefined;
    const parser = createParser({
      onEvent: (e) => {
        let body: Json;
        try {
          body = JSON.parse(e.data) as Json;
        } catch {
          failure ??= new CliError(
            EXIT.refused,
            `${method}: an event that is not JSON: ${e.data.slice(0, 200)}`,
          );
          return;
        }
        if (body.error) failure ??= rpcError(method, body.error);
        else queue.push({ id: e.id, result: (body.result ?? {}) as Json });
      },
    });
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        parser.feed(decoder.decode(chunk, { stream: true }));
        while (queue.length > 0) yield queue.shift() as StreamEvent;
        if (failure) throw failure;
      }
    } catch (err) {
      if (err instanceof CliError) throw err;
      throw new CliError(EXIT.connection, `${method}: the stream broke: ${causeOf(err)}`);
    }
    while (queue.length > 0) yield queue.shift() as StreamEvent;
    if (failure) throw failure;
  }
}

function rpcError(method: string, error: Json): CliError {
  const code = typeof error.code === 'number' ? error.code : undefined;
  const message = `${method}: ${String(error.message ?? 'error')}${code === undefined ? '' : ` (${code})`}`;
  if (code === TASK_NOT_FOUND) return new CliError(EXIT.notFound, message, code);
  return new CliError(EXIT.refused, message, code);
}

/** The most telling reason of a fetch failure (undici hides ECONNREFUSED in `cause`). */
export function causeOf(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause;
  if (cause instanceof Error) return (cause as Error & { code?: string }).code ?? cause.message;
  return err.message;
}
