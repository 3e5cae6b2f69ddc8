import type { TaskPushNotificationConfig } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import type { PushConfig } from '../../engine/push.js';
import type { NewPushConfig } from '../../engine/push-configs.js';
import { type AddressPolicy, checkWebhookUrl } from '../../push/address-policy.js';
import type { SecretBox } from '../../push/secret-box.js';

/** What Get and List show instead of a stored secret. */
export const REDACTED = '********';

/**
 * The URL fragment that makes a webhook hear every event of its task, not only the transitions
 * that need its caller or end the task. Fragments are never sent over HTTP, so the receiver's URL
 * is unchanged: `https://hooks.example/a2a#taskhandle-events=all`.
 */
const ALL_EVENTS = 'taskhandle-events=all';

/**
 * The longest each field of a webhook may be, in characters: a webhook is stored and every one of
 * its task's notifications carries it, so it stays small (the body limit alone would let 1 MiB in).
 */
export const PUSH_FIELD_MAX = { id: 256, url: 2048, token: 1024, scheme: 64, credentials: 4096 } as const;

/** The first of a webhook's fields longer than {@link PUSH_FIELD_MAX} allows, said so. */
function tooLong(c: TaskPushNotificationConfig): string | undefined {
  const fields: [keyof typeof PUSH_FIELD_MAX, string | undefined][] = [
    ['id', c.id],
    ['url', c.url],
    ['token', c.token],
    ['scheme', c.authentication?.scheme],
    ['credentials', c.authentication?.credentials],
  ];
  for (const [name, value] of fields) {
    const max = PUSH_FIELD_MAX[name];
    if (value !== undefined && value.length > max) {
      const path = name === 'scheme' || name === 'credentials' ? `authentication.${name}` : name;
      return `push notification config: ${path} is ${value.length} characters long, more than the ${max} it may be`;
    }
  }
  return undefined;
}

/**
 * A caller's webhook, checked: fields of bounded size, a URL we may call (SSRF guard), an
 * authentication scheme if any. Its token and credentials are sealed here, as they come in: only
 * the dispatcher unseals them, to send.
 */
export function toNewPushConfig(
  c: TaskPushNotificationConfig,
  format: string,
  policy: AddressPolicy,
  secrets: SecretBox,
): NewPushConfig {
  if (!c.url) throw new RequestMalformedError('push notification config: url is required');
  const long = tooLong(c);
  if (long) throw new RequestMalformedError(long);
  const checked = checkWebhookUrl(c.url, policy);
  if ('reason' in checked) throw new RequestMalformedError(`push notification config: url ${checked.reason}`);
  // An empty authentication (`{}`, as the v0.3 kit and proto-JSON clients send for none) is none;
  // credentials without a scheme are a mistake worth saying.
  const auth =
    c.authentication?.scheme?.trim() || c.authentication?.credentials ? c.authentication : undefined;
  if (auth && !auth.scheme?.trim()) {
    throw new RequestMalformedError('push notification config: authentication.scheme is required');
  }
  return {
    id: c.id || undefined,
    url: c.url,
    token: c.token ? secrets.seal(c.token, 'token') : undefined,
    authentication: auth?.scheme
      ? {
          scheme: auth.scheme,
          credentials: auth.credentials ? secrets.seal(auth.credentials, 'credentials') : undefined,
        }
      : undefined,
    allEvents: checked.url.hash.slice(1).split('&').includes(ALL_EVENTS),
    format,
  };
}

/** A stored webhook as callers see it: token and credentials are never returned. */
export function toSdkPushConfig(c: PushConfig): TaskPushNotificationConfig {
  return {
    tenant: '',
    id: c.id,
    taskId: c.taskId,
    url: c.url,
    token: c.token ? REDACTED : '',
    authentication: c.authentication && {
      scheme: c.authentication.scheme,
      credentials: c.authentication.credentials ? REDACTED : '',
    },
  };
}
