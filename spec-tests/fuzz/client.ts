import { Agent, type IncomingHttpHeaders, request } from 'node:http';
import { connect } from 'node:net';
import {
  Client as GrpcClient,
  credentials as grpcCredentials,
  Metadata,
  type ServiceError,
} from '@grpc/grpc-js';
import type { FuzzResponse } from './checks.js';
import type { FuzzRequest } from './requests.js';
import { expandBytes, expandDeep } from './values.js';

/** The most a response's body is read: enough for any error, not all of a big result. */
const READ_LIMIT = 64 * 1024;
/** A request unanswered after this long is a finding too (an SSE stream answers at once). */
const TIMEOUT_MS = 20_000;

/**
 * Sends generated requests as they are, bytes and all (fetch would normalise the path and refuse
 * odd methods), over at most `sockets` connections. An event stream is read to its first chunk and
 * closed.
 */
export function fuzzClient(
  baseUrl: string,
  credentials: Record<FuzzRequest['as'], Record<string, string>>,
  sockets: number,
) {
  const url = new URL(baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: sockets });
  const send = (r: FuzzRequest): Promise<FuzzResponse> =>
    new Promise((resolve, reject) => {
      const body = r.body === undefined ? undefined : Buffer.from(expandBytes(expandDeep(r.body)));
      const headers: Record<string, string> = { ...r.headers, ...credentials[r.as] };
      if (body) headers['Content-Length'] = String(body.length);
      const req = request({
        agent,
        host: url.hostname,
        port: url.port,
        method: r.method,
        path: r.path,
        headers,
        timeout: TIMEOUT_MS,
      });
      req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)));
      req.on('error', reject);
      let answered = false;
      req.on('response', (res) => {
        answered = true;
        const contentType = String(res.headers['content-type'] ?? '');
        const sse = contentType.startsWith('text/event-stream');
        const chunks: Buffer[] = [];
        let size = 0;
        const done = () =>
          resolve({
            status: res.statusCode ?? 0,
            contentType,
            text: Buffer.concat(chunks).toString('utf8'),
            headers: res.headers,
            truncated: size > READ_LIMIT,
          });
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size <= READ_LIMIT) chunks.push(chunk);
          if (sse || size > READ_LIMIT) {
            done();
            res.destroy();
          }
        });
        res.on('end', done);
        res.on('error', () => done());
        // An event stream whose first event has not come yet: its headers said enough.
        if (sse) {
          setTimeout(() => {
            done();
            res.destroy();
          }, 200).unref();
        }
      });
      if (r.hangUpAfter === undefined || !body) req.end(body);
      else {
        // All of Content-Length announced, some of it sent, then the connection dropped.
        req.write(body.subarray(0, r.hangUpAfter));
        setTimeout(() => {
          if (!answered) resolve({ status: 0, contentType: '', text: '', hungUp: true });
          req.destroy();
        }, 50);
      }
    });
  return { send, close: () => agent.destroy() };
}

/**
 * A request as bytes on the wire, for what Node's client will not send: HTTP/1.0, no Host or two,
 * control bytes in a header. Its target is the request's path (which may be absolute-form).
 */
export interface Wire {
  version: '1.0' | '1.1';
  /** Its Host lines, in order (none: no Host header at all). */
  hosts: string[];
  /** Its Origin lines, in order. */
  origins: string[];
}

/**
 * Sends `r` as `wire` says (latin1 bytes, `Connection: close`) on a connection of its own and reads
 * the answer: its status, headers and body (de-chunked; an event stream to its first chunk).
 */
export function sendRaw(
  baseUrl: string,
  r: FuzzRequest,
  wire: Wire,
  credentials: Record<string, string>,
): Promise<FuzzResponse> {
  const url = new URL(baseUrl);
  const body = r.body === undefined ? undefined : Buffer.from(expandBytes(expandDeep(r.body)));
  const headers = Object.entries({ ...r.headers, ...credentials }).filter(
    ([k]) => !/^(host|origin|content-length|connection)$/i.test(k),
  );
  const lines = [
    `${r.method} ${r.path} HTTP/${wire.version}`,
    ...wire.hosts.map((h) => `Host: ${h}`),
    ...wire.origins.map((o) => `Origin: ${o}`),
    ...headers.map(([k, v]) => `${k}: ${v}`),
    ...(body ? [`Content-Length: ${body.length}`] : []),
    'Connection: close',
  ];
  const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(parseAnswer(Buffer.concat(chunks)));
    };
    const timer = setTimeout(() => {
      finished = true;
      socket.destroy();
      reject(new Error(`no answer within ${TIMEOUT_MS} ms`));
    }, TIMEOUT_MS);
    socket.on('connect', () => socket.end(body ? Buffer.concat([head, body]) : head));
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      // An event stream does not end: its headers and first bytes say enough (its headers alone,
      // if no event comes within 200 ms).
      const all = Buffer.concat(chunks);
      const end = all.indexOf('\r\n\r\n');
      if (end >= 0 && /content-type: *text\/event-stream/i.test(all.subarray(0, end).toString('latin1')))
        setTimeout(finish, all.length > end + 4 ? 10 : 200).unref();
    });
    socket.on('end', finish);
    socket.on('close', finish);
    socket.on('error', () => finish());
  });
}

/** An HTTP/1.x answer read off the wire: status line, headers, body (chunked or not). */
function parseAnswer(bytes: Buffer): FuzzResponse {
  const end = bytes.indexOf('\r\n\r\n');
  if (end < 0)
    return { status: 0, contentType: '', text: `an answer without its head: ${bytes.toString('latin1')}` };
  const [statusLine = '', ...fields] = bytes.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0);
  const headers: IncomingHttpHeaders = {};
  for (const field of fields) {
    const colon = field.indexOf(':');
    const name = field.slice(0, colon).trim().toLowerCase();
    const value = field.slice(colon + 1).trim();
    const had = headers[name];
    headers[name] = had === undefined ? value : `${String(had)}, ${value}`;
  }
  let body = bytes.subarray(end + 4);
  if (/chunked/i.test(String(headers['transfer-encoding'] ?? ''))) {
    const parts: Buffer[] = [];
    let at = 0;
    for (;;) {
      const line = body.indexOf('\r\n', at);
      if (line < 0) break;
      const size = Number.parseInt(body.subarray(at, line).toString('latin1'), 16);
      if (!(size > 0)) break;
      parts.push(body.subarray(line + 2, line + 2 + size));
      at = line + 2 + size + 2;
    }
    body = Buffer.concat(parts);
  } else if (headers['content-length'] !== undefined) {
    body = body.subarray(0, Number(headers['content-length']));
  }
  const text = body.subarray(0, READ_LIMIT).toString('utf8');
  return {
    status,
    contentType: String(headers['content-type'] ?? ''),
    text,
    headers,
    truncated: body.length > READ_LIMIT,
  };
}

/** A stream held open: what its answer said first, and whether the server has ended it since. */
export interface HeldStream {
  status: number;
  contentType: string;
  headers: IncomingHttpHeaders;
  /** The body so far: a whole answer, or an event stream's first event (and what came with it). */
  readonly text: string;
  /** The server has ended the answer. */
  readonly ended: boolean;
  /** Drops the connection, as a client that goes away. */
  close(): void;
}

/**
 * Opens `r` on a connection of its own and holds it: `answer` resolves with a whole answer, or with
 * an event stream's first event once `settleMs` more have passed (time to see whether the server
 * ends it). `close` drops the connection, answered or not (a worker that gives up its long poll).
 */
export function hold(
  baseUrl: string,
  r: FuzzRequest,
  settleMs = 0,
): { answer: Promise<HeldStream>; close: () => void } {
  const url = new URL(baseUrl);
  const body = r.body === undefined ? undefined : Buffer.from(r.body);
  const req = request({
    agent: false,
    host: url.hostname,
    port: url.port,
    method: r.method,
    path: r.path,
    headers: { ...r.headers, ...(body ? { 'Content-Length': String(body.length) } : {}) },
    timeout: TIMEOUT_MS,
  });
  const answer = new Promise<HeldStream>((resolve, reject) => {
    req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.on('response', (res) => {
      const contentType = String(res.headers['content-type'] ?? '');
      let text = '';
      let ended = false;
      let settled = false;
      const held: HeldStream = {
        status: res.statusCode ?? 0,
        contentType,
        headers: res.headers,
        get text() {
          return text;
        },
        get ended() {
          return ended;
        },
        close: () => req.destroy(),
      };
      const settle = () => {
        if (settled) return;
        settled = true;
        resolve(held);
      };
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        if (contentType.startsWith('text/event-stream') && text.includes('\n\n'))
          setTimeout(settle, settleMs).unref();
      });
      const end = () => {
        ended = true;
        settle();
      };
      res.on('end', end);
      res.on('close', end);
      res.on('error', end);
    });
  });
  // Dropped before its answer, it rejects: whoever still awaits it hears so, nobody else.
  answer.catch(() => {});
  req.end(body);
  return { answer, close: () => req.destroy() };
}

/** GetTaskRequest's and SubscribeToTaskRequest's protobuf bytes: field 2, the task id. */
export const grpcTaskRequest = (taskId: string): Buffer => {
  const id = Buffer.from(taskId);
  return Buffer.concat([Buffer.from([0x12, id.length]), id]);
};

/** A unary gRPC call's outcome: its status code and details (0: it succeeded). */
export interface GrpcOutcome {
  code: number;
  details: string;
}

/**
 * A unary gRPC call of `method` with the request's protobuf bytes, as a client whose `:authority`
 * is `authority` (grpc.default_authority) sends it; `undefined` when the client will not make it.
 */
export function grpcUnary(
  address: string,
  method: string,
  message: Buffer,
  o: { authority?: string; metadata?: Record<string, string> } = {},
): Promise<GrpcOutcome | undefined> {
  let client: GrpcClient;
  try {
    client = new GrpcClient(
      address,
      grpcCredentials.createInsecure(),
      o.authority === undefined ? {} : { 'grpc.default_authority': o.authority },
    );
  } catch {
    return Promise.resolve(undefined);
  }
  const metadata = new Metadata();
  for (const [k, v] of Object.entries(o.metadata ?? {})) metadata.set(k.toLowerCase(), v);
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      method,
      (b: Buffer) => b,
      (b: Buffer) => b,
      message,
      metadata,
      { deadline: Date.now() + TIMEOUT_MS },
      (err: ServiceError | null) => {
        client.close();
        resolve(err ? { code: err.code, details: err.details } : { code: 0, details: '' });
      },
    );
  });
}

/** A gRPC server stream held open: admitted (its first message came) or ended with a status. */
export interface GrpcHeld {
  /** The first message came: the stream stands. */
  admitted: boolean;
  /** How it ended, if it has (the status of a refusal). */
  status?: GrpcOutcome;
  close(): void;
}

/** Opens a gRPC server stream and holds it: resolves at its first message, or its end. */
export function grpcHold(
  address: string,
  method: string,
  message: Buffer,
  metadata: Record<string, string>,
): Promise<GrpcHeld> {
  const client = new GrpcClient(address, grpcCredentials.createInsecure());
  const meta = new Metadata();
  for (const [k, v] of Object.entries(metadata)) meta.set(k.toLowerCase(), v);
  const call = client.makeServerStreamRequest(
    method,
    (b: Buffer) => b,
    (b: Buffer) => b,
    message,
    meta,
  );
  const close = () => {
    call.cancel();
    client.close();
  };
  return new Promise((resolve) => {
    const timer = setTimeout(
      () => resolve({ admitted: false, status: { code: -1, details: 'no message nor status' }, close }),
      TIMEOUT_MS,
    );
    call.on('data', () => {
      clearTimeout(timer);
      resolve({ admitted: true, close });
    });
    call.on('error', (err: ServiceError) => {
      clearTimeout(timer);
      resolve({ admitted: false, status: { code: err.code, details: err.details }, close });
    });
    call.on('end', () => {
      clearTimeout(timer);
      resolve({ admitted: false, status: { code: 0, details: 'ended' }, close });
    });
  });
}
