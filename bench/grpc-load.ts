import { connect, type Socket } from 'node:net';
import { GetTaskRequest, SendMessageRequest } from '@a2a-js/sdk';
import { A2AService } from '@a2a-js/sdk/server/grpc';

/** What a load run counted, in the fields of autocannon's result that load.ts reads. */
export interface Tally {
  '2xx': number;
  non2xx: number;
  mismatches: number;
  errors: number;
  /** Seconds. */
  duration: number;
  latency: { p50: number; p99: number };
  /** autocannon's count per HTTP status (GETs are judged by it); gRPC has none. */
  statusCodeStats?: Record<`${number}`, { count?: number }>;
}

/**
 * autocannon's model over gRPC: `connections` HTTP/2 connections with one call in flight on each, for
 * `durationS`. Each request is the JSON-RPC body `body()` gives (SendMessage, GetTask) sent as the
 * unary gRPC call of that method: the same requests as the JSON-RPC kinds. A call answered without
 * a message (grpc-js answers a unary call's error so, with its status alone) counts as a non-2xx
 * answer.
 *
 * Written on sockets, as autocannon is for HTTP/1.1, for the same reason: the load shares two cores
 * with the server it measures. grpc-js clients spent 240 us of CPU a call and node:http2 ones 130 us,
 * against the server's 160 us a GetTask (h2load: 20 us; autocannon 30 us a JSON-RPC poll), so that a
 * run measured its client as much as the server. bench/BENCHMARKS.md has the figures.
 */
export async function fireGrpc(
  target: string,
  connections: number,
  durationS: number,
  body: () => string,
): Promise<Tally> {
  const h2 = await Promise.all(Array.from({ length: connections }, () => H2Connection.open(target)));
  const latencies: number[] = [];
  const tally = { ok: 0, failed: 0, errors: 0 };
  const started = performance.now();
  const end = started + durationS * 1000;
  const loop = async (connection: H2Connection) => {
    while (performance.now() < end) {
      const [headers, message] = grpcRequest(body(), target);
      const t0 = performance.now();
      const answered = await connection.call(headers, message);
      latencies.push(performance.now() - t0);
      if (answered === true) tally.ok++;
      else if (answered === false) tally.failed++;
      else tally.errors++;
      // a lost connection fails its call and ends its loop (the run counts the error, and is invalid)
      if (connection.broken) break;
    }
  };
  await Promise.all(h2.map(loop));
  const duration = (performance.now() - started) / 1000;
  for (const c of h2) c.close();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return {
    '2xx': tally.ok,
    non2xx: tally.failed,
    mismatches: 0,
    errors: tally.errors,
    duration,
    latency: { p50: at(0.5), p99: at(0.99) },
  };
}

/** The frame types and flags of HTTP/2 (RFC 9113) that a unary call meets. */
const DATA = 0x0;
const HEADERS = 0x1;
const RST_STREAM = 0x3;
const SETTINGS = 0x4;
const PING = 0x6;
const GOAWAY = 0x7;
const WINDOW_UPDATE = 0x8;
const END_STREAM = 0x1;
const END_HEADERS = 0x4;
const ACK = 0x1;
const PADDED = 0x8;
const MAX_WINDOW = 2 ** 31 - 1;
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/** One HTTP/2 frame: its 9-byte header (length, type, flags, stream) and payload. */
function frame(type: number, flags: number, stream: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const f = Buffer.allocUnsafe(9 + payload.length);
  f.writeUIntBE(payload.length, 0, 3);
  f[3] = type;
  f[4] = flags;
  f.writeUInt32BE(stream, 5);
  payload.copy(f, 9);
  return f;
}

/** A call in progress: whether its answer carried a message yet, and who waits for its end. */
interface Pending {
  message: boolean;
  done(answered: boolean | undefined): void;
}

/**
 * A client's end of one HTTP/2 connection, as much of it as unary calls need, one at a time or several:
 * it sends each call's HEADERS and DATA, and reads only frame headers back (a call ends at its
 * stream's END_STREAM; whether a message came with it tells success), answering SETTINGS and PING.
 * Its receive windows are opened to the maximum at once (a run receives far less), so it never sends
 * WINDOW_UPDATE; the server's window for what it sends is kept.
 */
class H2Connection {
  readonly #socket: Socket;
  readonly #pending = new Map<number, Pending>();
  #unread: Buffer = Buffer.alloc(0);
  #nextStream = 1;
  #sendWindow = 65_535;
  #broken = false;

  private constructor(socket: Socket) {
    this.#socket = socket;
    socket.on('data', (chunk: Buffer) => this.#read(chunk));
    socket.on('error', () => this.#fail());
    socket.on('close', () => this.#fail());
  }

  static open(target: string): Promise<H2Connection> {
    const colon = target.lastIndexOf(':');
    const host = target.slice(0, colon).replace(/^\[|\]$/g, '');
    return new Promise((resolve, reject) => {
      // without Nagle's delay, as autocannon's sockets and grpc-js's are: a call is two small writes
      const socket = connect({ host, port: Number(target.slice(colon + 1)), noDelay: true });
      socket.once('error', reject);
      socket.once('connect', () => {
        socket.off('error', reject);
        const settings = Buffer.alloc(12);
        settings.writeUInt16BE(0x2, 0); // ENABLE_PUSH 0
        settings.writeUInt16BE(0x4, 6); // INITIAL_WINDOW_SIZE
        settings.writeUInt32BE(MAX_WINDOW, 8);
        const connectionWindow = Buffer.alloc(4);
        connectionWindow.writeUInt32BE(MAX_WINDOW - 65_535, 0);
        socket.write(
          Buffer.concat([
            PREFACE,
            frame(SETTINGS, 0, 0, settings),
            frame(WINDOW_UPDATE, 0, 0, connectionWindow),
          ]),
        );
        resolve(new H2Connection(socket));
      });
    });
  }

  /** The connection is gone (closed, failed, or told to go away): its calls fail at once. */
  get broken(): boolean {
    return this.#broken;
  }

  /** One unary call: true once answered with a message, false if without one, undefined if it broke. */
  call(headerBlock: Buffer, message: Buffer): Promise<boolean | undefined> {
    if (this.#broken || message.length > this.#sendWindow) return Promise.resolve(undefined);
    this.#sendWindow -= message.length;
    const stream = this.#nextStream;
    this.#nextStream += 2;
    return new Promise((done) => {
      this.#pending.set(stream, { message: false, done });
      this.#socket.write(
        Buffer.concat([
          frame(HEADERS, END_HEADERS, stream, headerBlock),
          frame(DATA, END_STREAM, stream, message),
        ]),
      );
    });
  }

  close(): void {
    this.#socket.end(frame(GOAWAY, 0, 0, Buffer.alloc(8)));
  }

  #read(chunk: Buffer): void {
    let buf = this.#unread.length === 0 ? chunk : Buffer.concat([this.#unread, chunk]);
    while (buf.length >= 9) {
      const length = buf.readUIntBE(0, 3);
      if (buf.length < 9 + length) break;
      const type = buf[3] as number;
      const flags = buf[4] as number;
      const stream = buf.readUInt32BE(5) & 0x7fff_ffff; // the reserved bit left out
      this.#frame(type, flags, stream, buf.subarray(9, 9 + length));
      buf = buf.subarray(9 + length);
    }
    this.#unread = buf;
  }

  #frame(type: number, flags: number, stream: number, payload: Buffer): void {
    if (type === SETTINGS && !(flags & ACK)) this.#socket.write(frame(SETTINGS, ACK, 0));
    else if (type === PING && !(flags & ACK)) this.#socket.write(frame(PING, ACK, 0, payload));
    else if (type === WINDOW_UPDATE && stream === 0) this.#sendWindow += payload.readUInt32BE(0) & MAX_WINDOW;
    else if (type === GOAWAY) this.#fail();
    else if (type === RST_STREAM) this.#end(stream, undefined);
    else if (type === DATA || type === HEADERS) {
      const call = this.#pending.get(stream);
      // a gRPC message is at least its 5-byte prefix
      if (call && type === DATA && payload.length - (flags & PADDED ? 1 + (payload[0] as number) : 0) >= 5)
        call.message = true;
      if (call && flags & END_STREAM) this.#end(stream, call.message);
    }
  }

  #end(stream: number, answered: boolean | undefined): void {
    const call = this.#pending.get(stream);
    this.#pending.delete(stream);
    call?.done(answered);
  }

  #fail(): void {
    this.#broken = true;
    for (const stream of [...this.#pending.keys()]) this.#end(stream, undefined);
  }
}

/**
 * A call's request headers in HPACK (RFC 7541) without its dynamic table or Huffman coding: each a
 * literal never added to a table, under its static table index where the name has one.
 */
function headerBlock(path: string, authority: string): Buffer {
  const text = (s: string) => {
    const bytes = Buffer.from(s, 'latin1');
    if (bytes.length > 126) throw new Error(`a header longer than this client encodes: ${s}`);
    return Buffer.concat([Buffer.from([bytes.length]), bytes]);
  };
  return Buffer.concat([
    Buffer.from([0x83, 0x86]), // :method POST, :scheme http (static entries 3 and 6)
    Buffer.from([0x04]), // :path (static name 4)
    text(path),
    Buffer.from([0x01]), // :authority (1): the host admission checks
    text(authority),
    Buffer.from([0x0f, 0x10]), // content-type (31)
    text('application/grpc'),
    Buffer.from([0x00]),
    text('te'),
    text('trailers'),
    Buffer.from([0x00]),
    text('a2a-version'),
    text('1.0'),
  ]);
}

const blocks = new Map<string, Buffer>();

/** A JSON-RPC body of the bench as its gRPC call: the header block of its method, its framed message. */
function grpcRequest(text: string, authority: string): [Buffer, Buffer] {
  const { method, params } = JSON.parse(text) as { method: string; params: unknown };
  let path: string;
  let message: Buffer;
  if (method === 'SendMessage') {
    path = A2AService.sendMessage.path;
    message = A2AService.sendMessage.requestSerialize(SendMessageRequest.fromJSON(params));
  } else if (method === 'GetTask') {
    path = A2AService.getTask.path;
    message = A2AService.getTask.requestSerialize(GetTaskRequest.fromJSON(params));
  } else throw new Error(`the gRPC load has no mapping for ${method}`);
  const key = `${authority}${path}`;
  let block = blocks.get(key);
  if (!block) {
    block = headerBlock(path, authority);
    blocks.set(key, block);
  }
  // gRPC's message framing: not compressed (0), the length as 4 bytes big-endian, the message
  const framed = Buffer.allocUnsafe(5 + message.length);
  framed[0] = 0;
  framed.writeUInt32BE(message.length, 1);
  message.copy(framed, 5);
  return [block, framed];
}
