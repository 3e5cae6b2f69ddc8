/**
 * v0.3's HTTP+JSON binding of SetTaskPushNotificationConfig, in both the forms clients send. The
 * proto (`body: "config"`) puts the bare TaskPushNotificationConfig in the body; the prose (§7.5),
 * a2a-python 0.3 and the conformance kit send the whole request instead: `{ parent, configId,
 * config: TaskPushNotificationConfig }`. The SDK's router reads the bare form only, and takes the
 * task from the body's `name`, not from the URL. We hand it the bare form, naming the URL's task.
 */

const ROUTE = /^\/v1\/tasks\/([^/]+)\/pushNotificationConfigs\/?$/;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
/** A field under its JSON name or its proto name, as protobuf JSON allows. */
const field = (o: Json, json: string, proto: string): unknown => o[json] ?? o[proto];

/**
 * The body of a v0.3 REST SetTaskPushNotificationConfig as the SDK reads it, or a problem to refuse
 * it with: `name` is the URL's task (a body that names another task is refused: the URL is what was
 * authorized and routed), the config id from `configId` when the config itself has none.
 */
export function legacyPushConfigBody(
  path: string,
  body: unknown,
): { body: unknown } | { problem: string } | undefined {
  const taskId = ROUTE.exec(path)?.[1];
  if (taskId === undefined || !isObject(body)) return undefined;
  const wrapped = isObject(body.config) ? body.config : undefined;
  const config = wrapped ?? body;
  let decoded: string;
  try {
    decoded = decodeURIComponent(taskId);
  } catch {
    return {
      problem:
        'the task id in the URL is not valid percent-encoding (a % must be followed by two hex digits)',
    };
  }
  const named = `tasks/${decoded}`;
  const elsewhere = anotherTask(named, config, wrapped && body);
  if (elsewhere) return { problem: elsewhere };
  const push = field(config, 'pushNotificationConfig', 'push_notification_config');
  const name = field(config, 'name', 'name');
  const configId =
    (wrapped && field(body, 'configId', 'config_id')) ||
    (typeof name === 'string' && name.startsWith(`${named}/pushNotificationConfigs/`)
      ? name.slice(`${named}/pushNotificationConfigs/`.length)
      : undefined);
  const withId =
    isObject(push) && typeof configId === 'string' && configId !== '' && !push.id
      ? { ...push, id: configId }
      : push;
  return { body: { name: named, pushNotificationConfig: withId } };
}

/**
 * Why the config's `name` (or the wrapping request's `parent`) names another task than `named`,
 * the URL's; undefined when neither does.
 */
function anotherTask(named: string, config: Json, request: Json | undefined): string | undefined {
  for (const [where, value] of [
    ['name', field(config, 'name', 'name')],
    ['parent', request && field(request, 'parent', 'parent')],
  ] as const) {
    if (typeof value === 'string' && value !== '' && !value.startsWith(`${named}/`) && value !== named)
      return `${where} "${value}" names another task than the URL's (${named}); send it to that task's URL`;
  }
  return undefined;
}
