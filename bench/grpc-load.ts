import { GetTaskRequest, SendMessageRequest } from '@a2a-js/sdk';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import { credentials, Metadata, makeGenericClientConstructor, type ServiceError } from '@grpc/grpc-js';

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

type Unary = (request: unknown, metadata: Metadata, done: (err: ServiceError | null) => void) => void;
const Client = makeGenericClientConstructor(A2AService, 'A2AService');

/**
 * autocannon's model over gRPC: `connections` clients, each on its own HTTP/2 connection with one call
 * in flight at a time, for `durationS`. Each request is the JSON-RPC body `body()` gives (SendMessage,
 * GetTask) sent as the gRPC call of that method: the same requests as the JSON-RPC kinds. A call that
 * ends with a status other than OK counts as a non-2xx answer.
 */
export async function fireGrpc(
  target: string,
  connections: number,
  durationS: number,
  body: () => string,
): Promise<Tally> {
  const clients = Array.from(
    { length: connections },
    // Its own subchannel pool: a connection of its own, as autocannon's connections are.
    () => new Client(target, credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 }),
  );
  const metadata = new Metadata();
  metadata.set('a2a-version', '1.0');
  const latencies: number[] = [];
  const tally = { ok: 0, failed: 0 };
  const started = performance.now();
  const end = started + durationS * 1000;
  const loop = async (client: InstanceType<typeof Client>) => {
    while (performance.now() < end) {
      const [method, request] = grpcRequest(body());
      const t0 = performance.now();
      const failed = await new Promise<boolean>((resolve) =>
        (client[method] as Unary).call(client, request, metadata, (err) => resolve(err !== null)),
      );
      latencies.push(performance.now() - t0);
      if (failed) tally.failed++;
      else tally.ok++;
    }
  };
  await Promise.all(clients.map(loop));
  const duration = (performance.now() - started) / 1000;
  for (const c of clients) c.close();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return {
    '2xx': tally.ok,
    non2xx: tally.failed,
    mismatches: 0,
    errors: 0,
    duration,
    latency: { p50: at(0.5), p99: at(0.99) },
  };
}

/** A JSON-RPC body of the bench as the gRPC method and request message it stands for. */
function grpcRequest(text: string): ['sendMessage' | 'getTask', unknown] {
  const { method, params } = JSON.parse(text) as { method: string; params: unknown };
  if (method === 'SendMessage') return ['sendMessage', SendMessageRequest.fromJSON(params)];
  if (method === 'GetTask') return ['getTask', GetTaskRequest.fromJSON(params)];
  throw new Error(`the gRPC load has no mapping for ${method}`);
}
