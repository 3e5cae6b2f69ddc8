// A2A over gRPC with the SDK's own client (@a2a-js/sdk, its GrpcTransportFactory): reads the agent
// card, dials the card's GRPC interface, starts an export, polls it, follows its stream, drops the
// stream and resumes it from the last event id it saw.
//
//   GRPC_PORT=50051 npm start             # the server, in one shell
//   node examples/grpc-client.mjs         # in another; AGENT_URL and API_KEY (when keys are on) from the env
//
// It prints one line per step and exits 0 once the export has completed.
import { SendMessageRequest, TaskState } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions } from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';

const agent = process.env.AGENT_URL ?? 'http://127.0.0.1:41241';
const HANDLE = 'https://taskhandle.dev/extensions/task-handle/v1';
// Credentials and the resume point travel as gRPC metadata (the SDK calls them service parameters).
const metadata = (extra = {}) => ({
  serviceParameters: { ...(process.env.API_KEY ? { 'x-api-key': process.env.API_KEY } : {}), ...extra },
});
/** @param {import('@a2a-js/sdk').TaskStatus | undefined} status (the SDK's types let a task lack one) */
const stateOf = (status) => TaskState[status?.state ?? TaskState.TASK_STATE_UNSPECIFIED];

const factory = new ClientFactory(
  ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    // Plaintext, as the server serves it on 127.0.0.1; with GRPC_TLS_*: { grpcChannelCredentials: credentials.createSsl(ca) }.
    transports: [new GrpcTransportFactory()],
    preferredTransports: ['GRPC'],
  }),
);
const client = await factory.createFromUrl(agent);
const card = await client.getAgentCard(metadata());
const grpc = card.supportedInterfaces.find((i) => i.protocolBinding === 'GRPC');
console.log(
  `card: ${client.transport.protocolName} ${client.protocolVersion} at ${grpc?.url ?? '(no GRPC interface: is GRPC_PORT set?)'}`,
);

const send = SendMessageRequest.fromJSON({
  message: {
    messageId: crypto.randomUUID(),
    role: 'ROLE_USER',
    parts: [{ data: { skill: 'export', input: { rows: 20, chunkRows: 2, delayMs: 100 } } }],
  },
  configuration: { returnImmediately: true },
});
const task = await client.sendMessage(send, metadata());
// A skill may answer some messages with a message and no task; export always makes a task.
if (!('id' in task)) throw new Error(`the agent answered with a message, not a task: ${task.messageId}`);
console.log(`created ${task.id}: ${stateOf(task.status)}`);

const polled = await client.getTask({ tenant: '', id: task.id, historyLength: 0 }, metadata());
console.log(
  `polled: ${stateOf(polled.status)}, poll again in ${polled.metadata?.[HANDLE]?.pollIntervalMs} ms`,
);

// Each streamed event carries its event id in metadata[HANDLE].eventId.
let lastEventId = '';
let seen = 0;
for await (const { payload } of client.resubscribeTask({ tenant: '', id: task.id }, metadata())) {
  if (!payload) continue;
  lastEventId = payload.value.metadata?.[HANDLE]?.eventId ?? lastEventId;
  console.log(`event ${lastEventId}: ${payload.$case}`);
  if (++seen === 3) break; // the connection drops; the task runs on
}

let state = TaskState.TASK_STATE_UNSPECIFIED;
for await (const { payload } of client.resubscribeTask(
  { tenant: '', id: task.id },
  metadata({ 'last-event-id': lastEventId }),
)) {
  if (!payload) continue;
  const id = payload.value.metadata?.[HANDLE]?.eventId;
  const status = payload.$case === 'statusUpdate' ? payload.value.status?.state : undefined;
  state = status ?? state;
  console.log(`resumed event ${id}: ${payload.$case}${status === undefined ? '' : ` ${TaskState[status]}`}`);
}
console.log(`done: ${TaskState[state]}`);
process.exit(state === TaskState.TASK_STATE_COMPLETED ? 0 : 1);
