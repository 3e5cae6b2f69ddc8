import type { RequestHandler } from 'express';
import { isEngineError } from '../../engine/errors.js';
import { STATUS_OF, withSlotRetryAfter } from '../http/problem.js';
import { admitted } from './admit.js';
import { callOf } from './call.js';
import { follow, parseEventId } from './follow.js';
import { CODE, engineRefusal, replyError } from './jsonrpc.js';
import type { McpOptions } from './options.js';

/**
 * `GET /mcp` with Last-Event-ID: a stream of ours that the client lost, resumed after that event
 * (on any instance: the id says which request and task it follows). Without the header, the next
 * handler answers (405: no standalone stream).
 */
export const resumeStream =
  (o: McpOptions): RequestHandler =>
  async (req, res, next) => {
    const last = req.get('Last-Event-ID');
    if (last === undefined) return next();
    const principal = await admitted(o, req, res);
    if (!principal) return;
    const resumed = parseEventId(last);
    if (!resumed) {
      res
        .status(400)
        .json(replyError(null, CODE.invalidRequest, 'Last-Event-ID is not an event id of this server'));
      return;
    }
    const { followed: f, afterSeq } = resumed;
    if (afterSeq === 'end') {
      res
        .status(405)
        .set('Allow', 'POST')
        .json(replyError(f.id, CODE.invalidRequest, 'This stream has ended with its answer'));
      return;
    }
    const call = callOf(o, req, res, principal, {
      revision: { kind: 'handshake' },
      id: f.id,
      method: f.method,
      params: {},
    });
    try {
      await follow(call, f.taskId, {
        progressToken: f.progressToken,
        statusNotifications: f.statusNotifications,
        afterSeq,
      });
    } catch (err) {
      if (!isEngineError(err) || res.headersSent) throw err;
      // The status says what a client does next: 404 the task is gone, 429 (MAX_STREAMS) close a
      // stream or wait, 503 the server is stopping (resume on another instance).
      const refusal = engineRefusal(err);
      const status = STATUS_OF[err.code];
      withSlotRetryAfter(res, status);
      res.status(status).json(replyError(f.id, refusal.code, refusal.message));
    }
  };
