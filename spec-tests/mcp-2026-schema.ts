import { z } from 'zod';

/**
 * The result and notification types of MCP 2026-07-28 that /mcp answers with, written from the
 * revision's schema (schema/2026-07-28/schema.ts of modelcontextprotocol/modelcontextprotocol) and
 * SEP-2663 (the Tasks extension's Task, DetailedTask, CreateTaskResult and notifications/tasks):
 * their required fields and types. Open objects (`[key: string]: unknown` in the schema) stay open
 * (zod's default strips, so these are `looseObject`); what the schema closes is closed here.
 * No SDK ships schemas of this revision yet (@modelcontextprotocol/sdk 1.32.2 stops at 2025-11-25).
 */

const RequestId = z.union([z.string(), z.number()]);
/** Implementation: `name` and `version` required. */
const Implementation = z.looseObject({ name: z.string(), title: z.string().optional(), version: z.string() });
const ResultMeta = z.looseObject({ 'io.modelcontextprotocol/serverInfo': Implementation.optional() });

/** Result: `resultType` required ("Servers implementing this protocol version MUST include this field"). */
export const Result = z.looseObject({ _meta: ResultMeta.optional(), resultType: z.string() });

/** CacheableResult: `ttlMs` (an integer >= 0, "Servers MUST provide") and `cacheScope`. */
const Cacheable = {
  ttlMs: z.number().int().min(0),
  cacheScope: z.enum(['public', 'private']),
};

const JsonObject = z.record(z.string(), z.unknown());

export const ServerCapabilities = z.looseObject({
  experimental: z.record(z.string(), JsonObject).optional(),
  logging: JsonObject.optional(),
  completions: JsonObject.optional(),
  prompts: z.looseObject({ listChanged: z.boolean().optional() }).optional(),
  resources: z
    .looseObject({ subscribe: z.boolean().optional(), listChanged: z.boolean().optional() })
    .optional(),
  tools: z.looseObject({ listChanged: z.boolean().optional() }).optional(),
  extensions: z.record(z.string(), JsonObject).optional(),
});

export const DiscoverResult = Result.extend({
  supportedVersions: z.array(z.string()),
  capabilities: ServerCapabilities,
  instructions: z.string().optional(),
  ...Cacheable,
});

/** Tool: `name` and `inputSchema` (`type: "object"` at its root) required. */
export const Tool = z.looseObject({
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  inputSchema: z.looseObject({ $schema: z.string().optional(), type: z.literal('object') }),
  outputSchema: z.looseObject({ $schema: z.string().optional() }).optional(),
  annotations: JsonObject.optional(),
  icons: z.array(z.looseObject({ src: z.string() })).optional(),
  _meta: JsonObject.optional(),
});

export const ListToolsResult = Result.extend({
  tools: z.array(Tool),
  nextCursor: z.string().optional(),
  ...Cacheable,
});

/** The ContentBlocks this server writes: text, resource_link (a Resource: uri, name), embedded resource. */
const ContentBlock = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text'), text: z.string() }),
  z.looseObject({
    type: z.literal('resource_link'),
    uri: z.string(),
    name: z.string(),
    mimeType: z.string().optional(),
    size: z.number().optional(),
  }),
  z.looseObject({
    type: z.literal('resource'),
    resource: z.union([
      z.looseObject({ uri: z.string(), mimeType: z.string().optional(), text: z.string() }),
      z.looseObject({ uri: z.string(), mimeType: z.string().optional(), blob: z.string() }),
    ]),
  }),
]);

export const CallToolResult = Result.extend({
  content: z.array(ContentBlock),
  structuredContent: z.unknown().optional(),
  isError: z.boolean().optional(),
});

/** SEP-2663's Task: `ttlMs` is a number or null ("null for unlimited"). */
const TaskFields = {
  taskId: z.string(),
  status: z.enum(['working', 'input_required', 'completed', 'failed', 'cancelled']),
  statusMessage: z.string().optional(),
  createdAt: z.iso.datetime({ offset: true }),
  lastUpdatedAt: z.iso.datetime({ offset: true }),
  ttlMs: z.number().int().nullable(),
  pollIntervalMs: z.number().int().optional(),
};

/** An input request of the schema's InputRequest union that this server sends: a form elicitation. */
const ElicitRequest = z.looseObject({
  method: z.literal('elicitation/create'),
  params: z.looseObject({
    mode: z.literal('form').optional(),
    message: z.string(),
    requestedSchema: z.looseObject({
      $schema: z.string().optional(),
      type: z.literal('object'),
      properties: z.record(z.string(), JsonObject),
      required: z.array(z.string()).optional(),
    }),
  }),
});

/** DetailedTask: the status says which fields are required besides the Task's. */
const detailed = <T extends z.ZodRawShape>(base: T) =>
  z.discriminatedUnion('status', [
    z.looseObject({ ...base, ...TaskFields, status: z.literal('working') }),
    z.looseObject({
      ...base,
      ...TaskFields,
      status: z.literal('input_required'),
      inputRequests: z.record(z.string(), ElicitRequest),
    }),
    z.looseObject({ ...base, ...TaskFields, status: z.literal('completed'), result: CallToolResult }),
    z.looseObject({
      ...base,
      ...TaskFields,
      status: z.literal('failed'),
      error: z.looseObject({ code: z.number().int(), message: z.string() }),
    }),
    z.looseObject({ ...base, ...TaskFields, status: z.literal('cancelled') }),
  ]);

/** CreateTaskResult = Result & Task, `resultType: "task"`. */
export const CreateTaskResult = Result.extend({ ...TaskFields, resultType: z.literal('task') });

/** GetTaskResult = Result & DetailedTask, `resultType: "complete"`. */
export const GetTaskResult = detailed({ _meta: ResultMeta.optional(), resultType: z.literal('complete') });

/** UpdateTaskResult and CancelTaskResult: an empty acknowledgement, `resultType: "complete"`. */
export const Acknowledgement = Result.extend({ resultType: z.literal('complete') });

/** SubscriptionsListenResult: `_meta["io.modelcontextprotocol/subscriptionId"]` required. */
export const SubscriptionsListenResult = Result.extend({
  _meta: ResultMeta.extend({ 'io.modelcontextprotocol/subscriptionId': RequestId }),
});

const NotificationMeta = z.looseObject({ 'io.modelcontextprotocol/subscriptionId': RequestId.optional() });
/** SubscriptionFilter, with SEP-2663's `taskIds`. */
const SubscriptionFilter = z.looseObject({
  toolsListChanged: z.boolean().optional(),
  promptsListChanged: z.boolean().optional(),
  resourcesListChanged: z.boolean().optional(),
  resourceSubscriptions: z.array(z.string()).optional(),
  taskIds: z.array(z.string()).optional(),
});

export const SubscriptionsAcknowledgedNotification = z.looseObject({
  jsonrpc: z.literal('2.0'),
  method: z.literal('notifications/subscriptions/acknowledged'),
  params: z.looseObject({ _meta: NotificationMeta.optional(), notifications: SubscriptionFilter }),
});

/** TaskStatusNotification: `notifications/tasks`, its params a (Detailed)Task. */
export const TaskStatusNotification = z.looseObject({
  jsonrpc: z.literal('2.0'),
  method: z.literal('notifications/tasks'),
  params: detailed({ _meta: NotificationMeta.optional() }),
});

/** JSONRPCErrorResponse's error: `code` (an integer) and `message`. */
export const ErrorResponse = z.looseObject({
  jsonrpc: z.literal('2.0'),
  id: RequestId.optional(),
  error: z.looseObject({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }),
});

/** Parses `value` with `schema`; fails naming each wrong field, with the value. */
export function conforms<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
  throw new Error(`not of the schema: ${issues.join('; ')}\n${JSON.stringify(value, null, 2)}`);
}
