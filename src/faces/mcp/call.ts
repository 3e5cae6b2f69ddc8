import type { Request, Response } from 'express';
import { ownerKey, type Principal, policyOf } from '../../auth/principal.js';
import type { CallerPolicy } from '../../engine/grant.js';
import type { RequestId } from './jsonrpc.js';
import type { McpOptions } from './options.js';
import type { Revision } from './revision.js';
import { type ClientDeclared, declaredBySession } from './session.js';

/** One JSON-RPC request, admitted: who asks, in which revision, and the HTTP exchange it came in. */
export interface Call {
  o: McpOptions;
  req: Request;
  res: Response;
  principal: Principal;
  owner: string;
  policy: CallerPolicy;
  revision: Revision;
  /**
   * What the client declared that this face acts on: in the request's own capabilities
   * (2026-07-28), or at `initialize`, carried in the session id (the handshake revisions).
   */
  declared: ClientDeclared;
  id: RequestId;
  method: string;
  params: Record<string, unknown>;
}

/** The call of an admitted request: the principal's owner key and policy derived once, here. */
export const callOf = (
  o: McpOptions,
  req: Request,
  res: Response,
  principal: Principal,
  request: Pick<Call, 'revision' | 'id' | 'method' | 'params'>,
): Call => ({
  o,
  req,
  res,
  principal,
  owner: ownerKey(principal),
  policy: policyOf(principal),
  declared:
    request.revision.kind === 'stateless'
      ? { formElicitation: request.revision.formElicitation }
      : declaredBySession(req),
  ...request,
});

/** A handler's answer: a result to send as JSON, or STREAMED when it wrote its own (SSE) response. */
export const STREAMED = Symbol('streamed');
export type Answer = Record<string, unknown> | typeof STREAMED;

/** `_meta` of what belongs to a task (2025-11-25): its id. */
export const relatedTask = (taskId: string) => ({ 'io.modelcontextprotocol/related-task': { taskId } });
