import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import {
  type ClientReadableStream,
  credentials,
  Metadata,
  makeGenericClientConstructor,
  type ServiceError,
  type StatusObject,
} from '@grpc/grpc-js';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/settings.js';
import { publishCard } from '../../../src/faces/a2a/agent-card.js';
import type { GrpcSide } from '../../../src/faces/a2a/grpc.js';
import { SigningKeys } from '../../../src/push/signing-keys.js';
import { type Backend, buildBackend } from '../../../src/server/backend.js';
import { startGrpcSide } from '../../../src/server/create.js';
import { buildHttp } from '../../../src/server/http.js';
import { offeredSkills } from '../../../src/server/skills.js';
import { tempDirs } from '../../helpers.js';

const UNAVAILABLE = 14;
const NOT_FOUND = 5;

interface Raw {
  getTask(req: unknown, md: Metadata, cb: (err: ServiceError | null) => void): void;
  subscribeToTask(req: unknown, md: Metadata): ClientReadableStream<unknown>;
  close(): void;
}

const getTask = (client: Raw, id: string) =>
  new Promise<ServiceError | null>((resolve) =>
    client.getTask({ tenant: '', id, historyLength: undefined }, new Metadata(), resolve),
  );
const subscribeStatus = (client: Raw, id: string) =>
  new Promise<StatusObject>((resolve) => {
    const stream = client.subscribeToTask({ tenant: '', id }, new Metadata());
    stream.on('error', () => {});
    stream.on('status', resolve);
  });

/**
 * The gRPC port listens before the agent card exists (the card names the port): here the server is
 * built as createServer builds it, and held in that window, its card not yet published.
 */
describe('a gRPC call between the port listening and the card being made', () => {
  const dirs = tempDirs();
  let backend: Backend | undefined;
  let grpc: GrpcSide | undefined;
  let client: Raw | undefined;
  afterAll(async () => {
    client?.close();
    grpc?.close();
    await backend?.store.close();
  });

  it('is answered UNAVAILABLE, saying the server is starting, with a retry pushback; served once the card is made', async () => {
    const dir = dirs.make();
    const config = loadConfig({
      DATABASE_URL: `sqlite:${join(dir, 'tasks.db')}`,
      HOST: '127.0.0.1',
      PORT: '0',
      GRPC_PORT: '0',
      KEYS_DIR: join(dir, 'keys'),
      AGENT_CARD_FILE: fileURLToPath(new URL('../../../agent-card.json', import.meta.url)),
    });
    const logger = pino({ level: 'silent' });
    backend = await buildBackend(config, await offeredSkills(config, []), logger, { mounted: false });
    const http = buildHttp(backend, config, logger);
    grpc = await startGrpcSide(config, http, backend, logger);
    if (!grpc) throw new Error('GRPC_PORT=0 should start the gRPC side');
    const Ctor = makeGenericClientConstructor(A2AService, 'A2AService');
    client = new Ctor(`127.0.0.1:${grpc.port}`, credentials.createInsecure()) as unknown as Raw;

    const early = await getTask(client, 'no-such-task');
    expect(early).toMatchObject({ code: UNAVAILABLE, details: 'taskhandle is starting; retry in a moment' });
    expect(early?.metadata.get('grpc-retry-pushback-ms')).toEqual(['1000']);
    const stream = await subscribeStatus(client, 'no-such-task');
    expect(stream).toMatchObject({ code: UNAVAILABLE, details: 'taskhandle is starting; retry in a moment' });

    const url = 'http://127.0.0.1:1';
    const card = publishCard(
      config.AGENT_CARD_FILE,
      url,
      backend.skills.all(),
      undefined,
      `127.0.0.1:${grpc.port}`,
    );
    http.publish(card, await SigningKeys.open(config.keysDir, { issuer: url, logger }));
    // The same calls now reach the service: an unknown task.
    expect((await getTask(client, 'no-such-task'))?.code).toBe(NOT_FOUND);
    expect((await subscribeStatus(client, 'no-such-task')).code).toBe(NOT_FOUND);
  });
});
