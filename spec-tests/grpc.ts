import type { StreamResponse, Task } from '@a2a-js/sdk';
import {
  type Client,
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
} from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';
import type { CallOptions, ChannelCredentials } from '@grpc/grpc-js';
import { expect } from 'vitest';
import { HANDLE } from './a2a.js';
import type { Agent } from './harness.js';

/** What the tests need of a gRPC client: the SDK's own, over the card's GRPC interface. */
export interface GrpcClientOptions {
  /** Credentials headers sent as metadata (default: the agent handle's). */
  credentials?: Record<string, string>;
  channel?: ChannelCredentials;
  call?: Partial<CallOptions>;
}

/**
 * The SDK's ClientFactory with only its gRPC transport, reading the agent card at the agent's URL.
 * Credentials go out as call metadata (`x-api-key`), added to each call by an interceptor.
 */
export async function grpcClient(agent: Agent, o: GrpcClientOptions = {}): Promise<Client> {
  const credentials = o.credentials ?? agent.credentials;
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new GrpcTransportFactory({ grpcChannelCredentials: o.channel, grpcCallOptions: o.call })],
      preferredTransports: ['GRPC'],
      clientConfig: {
        interceptors: [
          {
            before: async (args) => {
              if (!args.options) return;
              args.options.serviceParameters = { ...args.options.serviceParameters, ...lower(credentials) };
            },
            after: async () => {},
          },
        ],
      },
    }),
  );
  const client = await factory.createFromUrl(agent.url);
  expect(client.transport.protocolName).toBe('GRPC');
  return client;
}

const lower = (headers: Record<string, string>) =>
  Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));

/** The gRPC interface the agent's card lists. */
export async function grpcInterface(agent: Agent) {
  const card = await new DefaultAgentCardResolver().resolve(agent.url);
  return card.supportedInterfaces.find((i) => i.protocolBinding === 'GRPC');
}

export const asTask = (result: unknown): Task => {
  expect(result).toHaveProperty('status');
  return result as Task;
};

/** The event id a streamed event carries (gRPC has no per-message headers). */
export const eventIdOf = (e: StreamResponse): string | undefined =>
  (e.payload?.value.metadata as Record<string, { eventId?: string }> | undefined)?.[HANDLE]?.eventId;

/** What a call failed with: the SDK client's error, with the gRPC status and ErrorInfo reason it read. */
export async function failure(
  p: Promise<unknown>,
): Promise<{ status: number; reason?: string; name: string; message: string }> {
  try {
    await p;
  } catch (err) {
    return err as { status: number; reason?: string; name: string; message: string };
  }
  throw new Error('expected the call to fail');
}

/** Reads a stream to its end, keeping its events and how it ended. */
export async function drain(
  events: AsyncGenerator<StreamResponse>,
  stopAfter = Number.POSITIVE_INFINITY,
): Promise<{ events: StreamResponse[]; error?: { status: number; message: string } }> {
  const seen: StreamResponse[] = [];
  try {
    for await (const e of events) {
      seen.push(e);
      if (seen.length >= stopAfter) break;
    }
  } catch (err) {
    return { events: seen, error: err as { status: number; message: string } };
  }
  return { events: seen };
}

export const GRPC = {
  NOT_FOUND: 5,
  INVALID_ARGUMENT: 3,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;
