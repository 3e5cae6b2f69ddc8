import type { IncomingMessage, ServerResponse } from 'node:http';
import { sdkDispatch } from './jsonrpc-dispatch.js';
import { checkedParams, readRequest } from './jsonrpc-envelope.js';
import { servePoll, serveSubscription, subscriptionsOf } from './jsonrpc-fast-paths.js';
import type { JsonRpcOptions } from './jsonrpc-options.js';
import { serveSendStream } from './jsonrpc-send-stream.js';
import { legacySendOf, serveLegacySend } from './legacy-send.js';
import { legacySubscriptionsOf, serveLegacySubscription } from './legacy-subscribe.js';

/**
 * JSON-RPC 2.0 over HTTP POST, both protocol versions, on plain node:http (no framework on this hot
 * path). `A2A-Version: 1.0` selects v1.0; no header (or `0.3`) selects v0.3, as the spec says.
 * Errors are JSON-RPC error objects with HTTP 200. A v1.0 streaming method answers with SSE once it
 * has a first event (or, resuming, once its task is found); a refusal before that is plain JSON-RPC.
 * v0.3 answers every error of a streaming method as an SSE error event.
 *
 * One way through: the envelope (jsonrpc-envelope.ts: admission, parse, checks), the fast paths
 * (jsonrpc-fast-paths.ts: polls, v1.0 subscriptions; jsonrpc-send-stream.ts: v1.0 streaming sends;
 * legacy-subscribe.ts, legacy-send.ts: v0.3 resubscribe and message/stream), then the SDK's transport
 * (jsonrpc-dispatch.ts).
 */
export function jsonRpcEndpoint(
  o: JsonRpcOptions,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const subscriptions = subscriptionsOf(o);
  const sendStreams = subscriptionsOf(o, 'SendStreamingMessage');
  const legacySubscriptions = legacySubscriptionsOf(o);
  const legacySend = legacySendOf(o, legacySubscriptionsOf(o, 'message/stream'));
  const dispatch = sdkDispatch(o);
  return async (req, res) => {
    const request = await readRequest(req, res, o);
    if (!request) return;
    // The poll's hot path comes before the params' checks: it checks its own, as strictly.
    if (await servePoll(o, res, request)) return;
    const checked = checkedParams(res, request);
    if (!checked) return;
    if (serveSubscription(subscriptions, req, res, request)) return;
    if (await serveSendStream(o, sendStreams, req, res, request, checked.ask)) return;
    if (serveLegacySubscription(legacySubscriptions, req, res, request)) return;
    if (await serveLegacySend(legacySend, req, res, request, checked.ask)) return;
    return dispatch(req, res, request, checked.ask);
  };
}
