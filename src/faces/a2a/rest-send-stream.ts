import { Extensions, SendMessageRequest } from '@a2a-js/sdk';
import type { Request, Response } from 'express';
import { isJsonContentType } from '../http/body.js';
import type { CallState } from './call-state.js';
import { newCallContext } from './call-state.js';
import type { StreamStart } from './request-handler.js';
import type { RestOptions } from './rest-options.js';
import { type StreamFace, serveOne, serveStream } from './stream-subscriber.js';

/** `POST /message:stream`, no tenant: the route the SDK's router would serve it on. */
const SEND_STREAM = /^\/message:stream\/?$/;

/**
 * A v1.0 REST streaming send, its body read and checked (rest-call.ts): the send is our request
 * handler's (startStream, with a call context for that moment only), its task's stream the engine's
 * subscription (stream-subscriber.ts), with the face of REST subscriptions (rest-subscribe.ts).
 * True once served; false for another route, or for what the SDK's router words the refusal of (a
 * Content-Type it refuses, a body its codec cannot read, no message or messageId) or serves
 * otherwise (a tenant, a path in other case), which then take its path.
 */
export async function serveRestSendStream(
  o: RestOptions,
  face: StreamFace,
  req: Request,
  res: Response,
  state: CallState,
): Promise<boolean> {
  if (state.version !== '1.0' || req.method !== 'POST' || !SEND_STREAM.test(req.path)) return false;
  if (!isJsonContentType(req.headers['content-type'])) return false;
  const params = sendParams(req.body);
  if (params === undefined) return false;
  const extensions = Extensions.parseServiceParameter(req.header('a2a-extensions'));
  let start: StreamStart;
  try {
    start = await o.handler.startStream(params, newCallContext(state, extensions));
  } catch (err) {
    // Refused before the stream opened (MAX_STREAMS, a message refused): the status and body the SDK's router gives it.
    face.refuse(res, null, err);
    return true;
  }
  if (start.kind === 'once') serveOne(face, res, start.response);
  else serveStream(face, res, state.owner, start.taskId, state.lastEventId, null, start);
  return true;
}

/** The body decoded as the SDK's route decodes it, when its transport would hand it to our handler. */
function sendParams(body: unknown): SendMessageRequest | undefined {
  let params: SendMessageRequest;
  try {
    params = SendMessageRequest.fromJSON(body ?? {});
  } catch {
    return undefined;
  }
  return params.message?.messageId ? params : undefined;
}
