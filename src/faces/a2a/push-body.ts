import type { StreamResponse } from '@a2a-js/sdk';
import { V03PushNotificationSerializer } from '@a2a-js/sdk/compat/v0_3/server';
import { V1PushNotificationSerializer } from '@a2a-js/sdk/server';
import type { LoggedEvent } from '../../engine/events.js';
import type { TaskView } from '../../engine/task.js';
import type { RenderNotification } from '../../push/dispatcher.js';
import { toSdkMessage, toSdkTask, toStreamResponse, withEventId } from './wire.js';

const v1 = new V1PushNotificationSerializer();
const v03 = new V03PushNotificationSerializer();

/**
 * A notification body as the spec has it for the config's protocol version. v1.0: the event as a
 * StreamResponse (`statusUpdate`, `artifactUpdate`, or `message` for a caller's message when a config
 * hears every event), `application/a2a+json`. v0.3: the Task as it stood after the event.
 */
export const renderNotification: RenderNotification = (format, view: TaskView, entry: LoggedEvent) => {
  const task = toSdkTask(view);
  // The event as a stream shows it, its eventId (the log's sequence number) in its metadata too.
  const event = toStreamResponse(entry, view.record.contextId);
  const response: StreamResponse = event
    ? withEventId(event, entry.seq)
    : entry.event.kind === 'message'
      ? { payload: { $case: 'message', value: toSdkMessage(entry.event.message) } }
      : { payload: { $case: 'task', value: task } };
  return format === '0.3' ? v03.serialize(response, task) : v1.serialize(response);
};
