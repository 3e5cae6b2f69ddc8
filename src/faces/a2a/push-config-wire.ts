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
 * A caller's webhook, checked: a URL we may call (SSRF guard), an authentication scheme if any. Its
 * token and credentials are sealed here, as they come in: only the dispatcher unseals them, to send.
 */
export function toNewPushConfig(
  c: TaskPushNotificationConfig,
  format: string,
  policy: AddressPolicy,
  secrets: SecretBox,
): NewPushConfig {
  if (!c.url) throw new RequestMalformedError('push notification config: url is required');
  const checked = checkWebhookUrl(c.url, policy);
  if ('reason' in checked) throw new RequestMalformedError(`push notification config: url ${checked.reason}`);
  if (c.authentication && !c.authentication.scheme?.trim()) {
    throw new RequestMalformedError('push notification config: authentication.scheme is required');
  }
  return {
    id: c.id || undefined,
    url: c.url,
    token: c.token ? secrets.seal(c.token, 'token') : undefined,
    authentication: c.authentication?.scheme
      ? {
          scheme: c.authentication.scheme,
          credentials: c.authentication.credentials
            ? secrets.seal(c.authentication.credentials, 'credentials')
            : undefined,
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
