import { z } from 'zod';
import { expectedKind, kindOf } from '../../words/zod-words.js';
import type { ProtocolVersion } from './version.js';

/**
 * The types of the request fields the SDK's transports pass on without checking them (v0.3 JSON-RPC
 * passes its JSON as it came; the protobuf JSON decoders of v1.0 and v0.3 REST turn `{}` into
 * "[object Object]" and fail on a `null` inside a list). Checked at the edge, before
 * the SDK sees the request: a field of the wrong type is InvalidParams naming it, never a JS error
 * from deep inside a decoder, and never a value of another type stored (a contextId `5` as "5.0").
 * Fields the SDK checks itself (required ids, roles, part kinds) are left to it; unknown fields pass,
 * as protobuf JSON allows.
 */

const str = z.string().nullish();
const int = z.number().int().nullish();
const bool = z.boolean().nullish();
const object = z.record(z.string(), z.unknown()).nullish();
const strings = z.array(z.string()).nullish();
const list = <T extends z.ZodType>(item: T) => z.array(item).nullish();
/** protobuf JSON: an integer may come as a number or as a string of digits. */
const protoInt = z.union([z.number().int(), z.string().regex(/^-?\d{1,15}$/)]).nullish();
const protoEnum = z.union([z.string(), z.number().int()]).nullish();

/**
 * A protobuf JSON message: each field under its JSON name or its proto name (`messageId` or
 * `message_id`; the SDK's decoders read both), unknown fields allowed.
 */
function proto<T extends Record<string, z.ZodType>>(fields: T) {
  const snake: Record<string, z.ZodType> = {};
  for (const [name, type] of Object.entries(fields)) {
    const alias = name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    if (alias !== name) snake[alias] = type;
  }
  return z.looseObject({ ...fields, ...snake });
}

// v1.0 (protobuf JSON).
const PartV1 = proto({
  text: str,
  raw: str,
  url: str,
  data: z.unknown().optional(),
  mediaType: str,
  filename: str,
  metadata: object,
});
const MessageV1 = proto({
  messageId: str,
  contextId: str,
  taskId: str,
  role: protoEnum,
  parts: list(PartV1),
  metadata: object,
  extensions: strings,
  referenceTaskIds: strings,
});
const AuthenticationV1 = proto({ scheme: str, credentials: str });
const PushConfigV1 = proto({
  tenant: str,
  id: str,
  taskId: str,
  url: str,
  token: str,
  authentication: AuthenticationV1.nullish(),
});
const SendV1 = proto({
  tenant: str,
  message: MessageV1.nullish(),
  configuration: proto({
    acceptedOutputModes: strings,
    taskPushNotificationConfig: PushConfigV1.nullish(),
    historyLength: protoInt,
    returnImmediately: bool,
  }).nullish(),
  metadata: object,
});
const TaskIdV1 = proto({ tenant: str, id: str, metadata: object });
const GetTaskV1 = proto({ tenant: str, id: str, historyLength: protoInt });
const ListTasksV1 = proto({
  tenant: str,
  contextId: str,
  status: protoEnum,
  pageSize: protoInt,
  pageToken: str,
  historyLength: protoInt,
  statusTimestampAfter: str,
  includeArtifacts: bool,
});
const PushConfigRefV1 = proto({ tenant: str, taskId: str, id: str });
const ListPushConfigsV1 = proto({ tenant: str, taskId: str, pageSize: protoInt, pageToken: str });

// v0.3 REST (the protobuf JSON of that version).
const PushConfigV03Rest = proto({
  id: str,
  url: str,
  token: str,
  authentication: proto({ schemes: strings, credentials: str }).nullish(),
});
const MessageV03Rest = proto({
  messageId: str,
  contextId: str,
  taskId: str,
  role: protoEnum,
  content: list(
    proto({
      text: str,
      file: proto({ fileWithUri: str, fileWithBytes: str, mimeType: str, name: str }).nullish(),
      data: proto({ data: object }).nullish(),
      metadata: object,
    }),
  ),
  metadata: object,
  extensions: strings,
});
const SendV03Rest = proto({
  message: MessageV03Rest.nullish(),
  request: MessageV03Rest.nullish(),
  configuration: proto({
    acceptedOutputModes: strings,
    pushNotification: PushConfigV03Rest.nullish(),
    historyLength: protoInt,
    blocking: bool,
  }).nullish(),
  metadata: object,
});
const SetPushConfigV03Rest = proto({ name: str, pushNotificationConfig: PushConfigV03Rest.nullish() });

// v0.3 (the JSON-RPC types of that version).
const FileV03 = z.looseObject({
  name: str,
  mimeType: str,
  bytes: z.string().optional(),
  uri: z.string().optional(),
});
// The SDK reads each kind's content without looking: the content of the part's kind is required.
const PartV03 = z.discriminatedUnion(
  'kind',
  [
    z.looseObject({ kind: z.literal('text'), text: z.string(), metadata: object }),
    z.looseObject({ kind: z.literal('file'), file: FileV03, metadata: object }),
    z.looseObject({ kind: z.literal('data'), data: z.unknown(), metadata: object }),
  ],
  { error: 'must be "text", "file" or "data"' },
);
const MessageV03 = z.looseObject({
  kind: z.string().optional(),
  messageId: z.string().optional(),
  role: z.string().optional(),
  parts: z.array(PartV03).optional(),
  contextId: z.string().optional(),
  taskId: z.string().optional(),
  metadata: object,
  extensions: strings,
  referenceTaskIds: strings,
});
const AuthenticationV03 = z.looseObject({ schemes: strings, credentials: str });
const PushConfigV03 = z.looseObject({
  id: str,
  url: z.string().optional(),
  token: str,
  authentication: AuthenticationV03.nullish(),
});
const SendV03 = z.looseObject({
  message: MessageV03.optional(),
  configuration: z
    .looseObject({
      acceptedOutputModes: strings,
      historyLength: int,
      blocking: bool,
      pushNotificationConfig: PushConfigV03.nullish(),
    })
    .nullish(),
  metadata: object,
});
const TaskIdV03 = z.looseObject({ id: z.string().optional(), metadata: object });
const TaskQueryV03 = z.looseObject({ id: z.string().optional(), historyLength: int, metadata: object });
const SetPushConfigV03 = z.looseObject({
  taskId: z.string().optional(),
  // The SDK reads its fields without looking: required here, with a message saying so.
  pushNotificationConfig: PushConfigV03,
});
const PushConfigRefV03 = z.looseObject({
  id: z.string().optional(),
  pushNotificationConfigId: str,
  metadata: object,
});

/** Each method's parameters, by protocol version; methods not listed take none we read. */
const PARAMS: Record<ProtocolVersion, Record<string, z.ZodType>> = {
  '1.0': {
    SendMessage: SendV1,
    SendStreamingMessage: SendV1,
    GetTask: GetTaskV1,
    ListTasks: ListTasksV1,
    CancelTask: TaskIdV1,
    SubscribeToTask: TaskIdV1,
    CreateTaskPushNotificationConfig: PushConfigV1,
    GetTaskPushNotificationConfig: PushConfigRefV1,
    DeleteTaskPushNotificationConfig: PushConfigRefV1,
    ListTaskPushNotificationConfigs: ListPushConfigsV1,
  },
  '0.3': {
    'message/send': SendV03,
    'message/stream': SendV03,
    'tasks/get': TaskQueryV03,
    'tasks/cancel': TaskIdV03,
    'tasks/resubscribe': TaskIdV03,
    'tasks/pushNotificationConfig/set': SetPushConfigV03,
    'tasks/pushNotificationConfig/get': PushConfigRefV03,
    'tasks/pushNotificationConfig/list': TaskIdV03,
    'tasks/pushNotificationConfig/delete': PushConfigRefV03,
  },
};

/** The bodies of the REST routes that take one, by protocol version. */
export const REST_BODIES = {
  '1.0': { send: SendV1, pushConfig: PushConfigV1 },
  '0.3': { send: SendV03Rest, pushConfig: SetPushConfigV03Rest },
} as const;

/**
 * The first field of `params` that does not have its type, as a message naming it
 * (`message.parts[0]: expected object, received null`); `undefined` when the fields are well typed.
 * Params that are not an object are left to the SDK, which refuses them.
 */
export function paramsProblem(version: ProtocolVersion, method: string, params: unknown): string | undefined {
  const schemas = PARAMS[version];
  // Only the table's own entries: a method named "constructor" is not a schema.
  const schema = Object.hasOwn(schemas, method) ? schemas[method] : undefined;
  if (!schema || typeof params !== 'object' || params === null || Array.isArray(params)) return undefined;
  return problemOf(schema, params);
}

/** The first issue of `value` against `schema`, naming the field; `undefined` when it conforms. */
export function problemOf(schema: z.ZodType, value: unknown): string | undefined {
  const parsed = schema.safeParse(value);
  if (parsed.success) return undefined;
  const issue = parsed.error.issues[0];
  if (!issue) return "params do not have the method's shape";
  const field =
    issue.path
      .map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i === 0 ? '' : '.'}${String(p)}`))
      .join('') || 'params';
  const given = issue.path.reduce<unknown>(
    (v, key) => (v !== null && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[key] : undefined),
    value,
  );
  // zod's own wording names JS types ("received undefined"): say it as a caller would read it.
  if (given === undefined) return `${field} is required`;
  switch (issue.code) {
    case 'invalid_type':
      return `${field} must be ${expectedKind(issue.expected)}, not ${kindOf(given)}`;
    case 'invalid_union':
      // Our own words when the schema gave them (a part's kind); zod's would name its internals.
      return `${field} ${issue.message.startsWith('must ') ? issue.message : 'does not have any of the shapes it may take'}`;
    case 'invalid_value':
      return `${field} must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return `${field} is not valid (${issue.code.replaceAll('_', ' ')})`;
  }
}
