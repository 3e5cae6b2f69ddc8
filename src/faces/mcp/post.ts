import type { Request, Response } from 'express';
import { ownerKey, type Principal } from '../../auth/principal.js';
import { isEngineError } from '../../engine/errors.js';
import { traceMcp } from '../../telemetry/mcp-spans.js';
import { admitted } from './admit.js';
import { callOf, STREAMED } from './call.js';
import { parseElicitationId } from './follow.js';
import { checkHeaders } from './headers.js';
import { ElicitResult, pendingInput } from './input-request.js';
import { CODE, engineRefusal, type Incoming, type RequestId, RpcRefusal, replyError } from './jsonrpc.js';
import { readMessage } from './message.js';
import type { Method } from './methods.js';
import type { McpOptions } from './options.js';
import { type Revision, resultMeta, revisionOf } from './revision.js';
import { declaredBySession } from './session.js';
import { respond } from './tasks.js';

type Methods = Record<string, Method>;
type RpcRequest = { id: RequestId; method: string; params: Record<string, unknown> };

/**
 * `POST /mcp`: one JSON-RPC message. A response (to our elicitation) or a notification is taken
 * with 202; a request is answered by its method, or refused with a JSON-RPC error.
 */
export const postMessage =
  (o: McpOptions, methods: Methods) =>
  async (req: Request, res: Response): Promise<void> => {
    const principal = await admitted(o, req, res);
    if (!principal) return;
    const message = await readMessage(o, req);
    if (message instanceof RpcRefusal) {
      res.status(message.httpStatus).json(replyError(null, message.code, message.message));
      return;
    }
    if (!('method' in message)) {
      if (declaredBySession(req).formElicitation) await takeResponse(o, principal, message);
      res.status(202).end();
      return;
    }
    if (!('id' in message)) {
      res.status(202).end(); // notifications (initialized, cancelled...) change nothing here
      return;
    }
    const request = { id: message.id, method: message.method, params: message.params ?? {} };
    try {
      await answer(o, methods, req, res, principal, request);
    } catch (err) {
      const refusal = err instanceof RpcRefusal ? err : isEngineError(err) ? engineRefusal(err) : undefined;
      if (!refusal) throw err;
      if (res.headersSent) return void res.end();
      res
        .status(refusal.httpStatus)
        .json(replyError(request.id, refusal.code, refusal.message, refusal.data));
    }
  };

/** A request answered by its method: the result, with 2026-07-28's result fields where it speaks that. */
async function answer(
  o: McpOptions,
  methods: Methods,
  req: Request,
  res: Response,
  principal: Principal,
  { id, method, params }: RpcRequest,
): Promise<void> {
  const revision: Revision = revisionOf(params);
  if (revision.kind === 'stateless') checkHeaders(req, method, params);
  const handler = methodOf(methods, method, revision);
  const call = callOf(o, req, res, principal, { revision, id, method, params });
  const isTool = (name: string) => o.engine.skills.get(name) !== undefined;
  const result = await traceMcp(method, params, isTool, () => handler(call));
  if (result === STREAMED) return;
  const meta =
    revision.kind === 'stateless'
      ? {
          resultType: 'complete',
          ...result,
          _meta: { ...resultMeta(o.version()), ...(result._meta as object | undefined) },
        }
      : result;
  res.json({ jsonrpc: '2.0', id, result: meta });
}

/** The handler of a method by its name, or -32601 naming the methods there are. */
function methodOf(methods: Methods, method: string, revision: Revision): Method {
  const handler = Object.hasOwn(methods, method) ? methods[method] : undefined;
  if (handler) return handler;
  throw new RpcRefusal(
    CODE.methodNotFound,
    `Method "${method}" not found; this server answers ${Object.keys(methods).join(', ')}`,
    undefined,
    // 2026-07-28 answers an unknown method with 404, which a legacy endpoint's 404 lacks the body of
    revision.kind === 'stateless' ? 404 : 200,
  );
}

/**
 * A client's response to a request of ours: an elicitation this face sent for a task's question
 * (its id names both), from a client whose session says it declared elicitation (a client that
 * declared none was sent none: what it answers to an `input:` id is not an answer). Any other
 * response, an error reply, or one to a question since answered, changes nothing; nor does
 * `cancel` (see {@link respond}).
 */
async function takeResponse(o: McpOptions, principal: Principal, message: Incoming): Promise<void> {
  const about = parseElicitationId('id' in message ? message.id : undefined);
  const result = ElicitResult.safeParse('result' in message ? message.result : undefined);
  if (!about || !result.success) return;
  const owner = ownerKey(principal);
  const current = await o.engine.record(owner, about.taskId).catch(() => undefined);
  if (!current || pendingInput(current)?.key !== about.key) return;
  await respond({ o, owner, principal }, current.id, result.data);
}
