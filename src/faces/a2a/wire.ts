import {
  Artifact as SdkArtifactCodec,
  type Message as SdkMessage,
  Message as SdkMessageCodec,
  TaskState as SdkState,
  type Task as SdkTask,
  type StreamResponse,
} from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import type { LoggedEvent } from '../../engine/events.js';
import type { Message, TaskState, TaskView } from '../../engine/task.js';
import { GENERATION_EXTENSION_URI } from '../generation.js';
import { handleOf } from '../handle.js';
import { STATE_NAMES } from '../states.js';
import { HANDLE_EXTENSION_URI } from './handle-extension.js';

/** Conversions between the engine's records and the SDK's protocol objects. */

export const toSdkState = (state: TaskState): SdkState => STATE_NAMES[state].a2a;

export function fromSdkState(state: SdkState): TaskState | undefined {
  for (const [ours, names] of Object.entries(STATE_NAMES)) if (names.a2a === state) return ours as TaskState;
  return undefined;
}

export const toSdkMessage = (m: Message): SdkMessage => SdkMessageCodec.fromJSON(m);

/** A caller's message, checked for what the engine relies on; errors name the field. */
export function toEngineMessage(message: SdkMessage | undefined): Message {
  if (!message) throw new RequestMalformedError('params.message is required');
  if (!message.messageId) throw new RequestMalformedError('message.messageId is required');
  if (!message.parts?.length) throw new RequestMalformedError('message.parts must not be empty');
  // v1.0 requires it (and v0.3's "user"/"agent" arrive translated): a caller's message is ROLE_USER.
  if (!message.role) {
    throw new RequestMalformedError('message.role is required: send "ROLE_USER" (v0.3: "user")');
  }
  message.parts.forEach((p, i) => {
    if (!p.content)
      throw new RequestMalformedError(`message.parts[${i}] has no content (text, raw, url or data)`);
  });
  return SdkMessageCodec.toJSON(message) as Message;
}

export function toSdkTask(view: TaskView): SdkTask {
  const r = view.record;
  return {
    id: r.id,
    contextId: r.contextId,
    status: {
      state: toSdkState(r.state),
      message: r.statusMessage && toSdkMessage(r.statusMessage),
      timestamp: new Date(r.updatedAt).toISOString(),
    },
    artifacts: view.artifacts.map((a) => SdkArtifactCodec.fromJSON(a)),
    history: view.history.map(toSdkMessage),
    metadata: {
      ...r.metadata,
      [HANDLE_EXTENSION_URI]: handleOf(r),
      [GENERATION_EXTENSION_URI]: { generation: r.lastSeq },
    },
  };
}

/** One log entry as a stream event; `undefined` for entries streams do not show (the caller's own messages). */
export function toStreamResponse(entry: LoggedEvent, contextId: string): StreamResponse | undefined {
  const { event, taskId } = entry;
  const timestamp = new Date(entry.at).toISOString();
  switch (event.kind) {
    case 'status':
      return {
        payload: {
          $case: 'statusUpdate',
          value: {
            taskId,
            contextId,
            status: {
              state: toSdkState(event.state),
              message: event.message && toSdkMessage(event.message),
              timestamp,
            },
            metadata: undefined,
          },
        },
      };
    case 'progress':
      return {
        payload: {
          $case: 'statusUpdate',
          value: {
            taskId,
            contextId,
            status: { state: SdkState.TASK_STATE_WORKING, message: undefined, timestamp },
            metadata: { [HANDLE_EXTENSION_URI]: { progress: event.progress } },
          },
        },
      };
    case 'artifact':
      return {
        payload: {
          $case: 'artifactUpdate',
          value: {
            taskId,
            contextId,
            artifact: SdkArtifactCodec.fromJSON(event.artifact),
            append: event.append,
            lastChunk: event.lastChunk,
            metadata: undefined,
          },
        },
      };
    case 'message':
      return undefined;
  }
}

/**
 * A stream event with its event id in its own metadata, `metadata[HANDLE_EXTENSION_URI].eventId`:
 * the `Last-Event-ID` (SSE) or `last-event-id` metadata (gRPC) that resumes the stream after it. SSE
 * sends it as the `id:` line too, but clients' SSE parsers (the SDK's among them) do not hand that
 * line on; gRPC has no such line at all. Events are shared between subscribers: copied, not changed.
 */
export function withEventId(event: StreamResponse, seq: number | undefined): StreamResponse {
  const payload = event.payload;
  if (seq === undefined || !payload) return event;
  const { metadata } = payload.value as { metadata?: Record<string, unknown> };
  const handle = metadata?.[HANDLE_EXTENSION_URI] as Record<string, unknown> | undefined;
  const withId = { ...metadata, [HANDLE_EXTENSION_URI]: { ...handle, eventId: String(seq) } };
  return {
    payload: { ...payload, value: { ...payload.value, metadata: withId } } as StreamResponse['payload'],
  };
}
