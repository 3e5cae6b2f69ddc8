import { z } from 'zod';
import { isEngineError } from '../../engine/errors.js';
import { isTerminal, type TaskRecord } from '../../engine/task.js';
import { answerTask } from '../answer.js';
import { STATE_NAMES } from '../states.js';
import type { Answer, Call } from './call.js';
import { finalAnswer, follow } from './follow.js';
import { answerParts, ElicitResult, pendingInput } from './input-request.js';
import { CODE, invalidParams, paramsOf, RpcRefusal } from './jsonrpc.js';
import { callToolResult, taskError } from './result.js';
import { extensionTask, legacyTask } from './task-shape.js';

const TaskParams = z.object({ taskId: z.string().min(1).max(200) });
const ListParams = z.object({ cursor: z.string().max(2000).optional() });
const UpdateParams = TaskParams.extend({ inputResponses: z.record(z.string().max(200), ElicitResult) });
const PAGE_SIZE = 50;

const taskIdOf = (c: Call) => paramsOf(TaskParams, c.params, '{"taskId": string}').taskId;

/** `tasks/get`: the task (2025-11-25), or the extension's detailed task: result, error or input requests. */
export async function getTask(c: Call): Promise<Answer> {
  const r = await c.o.engine.record(c.owner, taskIdOf(c));
  if (c.revision.kind === 'handshake') return legacyTask(r);
  return { resultType: 'complete', ...(await detailedTask(c, r)) };
}

/**
 * The extension's DetailedTask: the task, with what its status carries (SEP-2663): `result` once
 * completed, `error` once failed, `inputRequests` while it waits. What `tasks/get` answers and
 * each `notifications/tasks` of a listen stream carries. The result is the CallToolResult of
 * 2026-07-28, whose `resultType` is required ("the structure matches the result type of the
 * original request").
 */
export async function detailedTask(
  c: Pick<Call, 'o' | 'owner' | 'declared'>,
  r: TaskRecord,
): Promise<Record<string, unknown>> {
  return { ...extensionTask(r), ...(await detail(c, r)) };
}

async function detail(
  c: Pick<Call, 'o' | 'owner' | 'declared'>,
  r: TaskRecord,
): Promise<Record<string, unknown>> {
  const status = STATE_NAMES[r.state].mcp;
  if (status === 'completed') {
    const result = callToolResult(await c.o.engine.get(c.owner, r.id, 0), c.o.engine.artifactUrl);
    return { result: { resultType: 'complete', ...result } };
  }
  if (status === 'failed') return { error: taskError(r) };
  const pending = pendingInput(r);
  if (!pending) return {};
  // "Servers MUST NOT send an inputRequests that the client has not declared support for in its
  // capabilities" (2026-07-28, multi round-trip requests): without elicitation the field is empty,
  // and the question is in statusMessage and _meta["taskhandle/input"], to answer with tasks/update.
  return { inputRequests: c.declared.formElicitation ? { [pending.key]: pending.request } : {} };
}

/** `tasks/result` (2025-11-25): the call's answer once the task ends; held open (SSE) until then. */
export async function taskResult(c: Call): Promise<Answer> {
  const r = await c.o.engine.record(c.owner, taskIdOf(c));
  if (!isTerminal(r.state)) return follow(c, r.id, { statusNotifications: true });
  const answer = await finalAnswer(c, r);
  if ('error' in answer) {
    const { code, message, data } = answer.error as { code: number; message: string; data?: unknown };
    throw new RpcRefusal(code, message, data);
  }
  return answer.result as Record<string, unknown>;
}

/**
 * `tasks/list` (2025-11-25): the caller's own tasks, newest first. Not offered to the anonymous
 * caller, as the capabilities say (no `tasks.list`): anonymous callers share one owner, so a list
 * would show each the others' tasks, whose ids are all it takes to reach them.
 */
export async function listTasks(c: Call): Promise<Answer> {
  const { cursor } = paramsOf(ListParams, c.params, '{"cursor"?: string}');
  if (c.principal.via === 'anonymous')
    throw new RpcRefusal(
      CODE.methodNotFound,
      'tasks/list is not offered to anonymous callers (the capabilities declare no tasks.list): they share one identity, and a task id is the key to its task. Keep the ids your calls return and read each with tasks/get, or call with credentials (an API key or a JWT)',
    );
  const { views, page } = await c.o.engine.list(c.owner, {
    pageSize: PAGE_SIZE,
    pageToken: cursor || undefined,
    historyLength: 0,
    withArtifacts: false,
  });
  return {
    tasks: views.map((v) => legacyTask(v.record)),
    ...(page.nextPageToken ? { nextCursor: page.nextPageToken } : {}),
  };
}

/**
 * `tasks/cancel`: aborts the job as A2A's CancelTask does. 2025-11-25 answers with the task and
 * refuses a finished one (-32602); the extension acknowledges (an empty result) whatever the state.
 */
export async function cancelTask(c: Call): Promise<Answer> {
  const current = await c.o.engine.record(c.owner, taskIdOf(c));
  if (isTerminal(current.state)) {
    if (c.revision.kind === 'stateless') return { resultType: 'complete' };
    throw invalidParams(
      `Task ${current.id} is already ${STATE_NAMES[current.state].mcp}; it cannot be cancelled`,
    );
  }
  const view = await c.o.engine.cancel(c.owner, current.id).catch((err: unknown) => {
    if (isEngineError(err) && err.code === 'task-not-cancelable') return undefined; // it just ended
    throw err;
  });
  if (view) c.o.audit('cancel', c.principal, current.id);
  if (c.revision.kind === 'stateless') return { resultType: 'complete' };
  return legacyTask(view?.record ?? (await c.o.engine.record(c.owner, current.id)));
}

/**
 * `tasks/update` (the extension's, and this face's under 2025-11-25 too, where a client that took
 * no elicitation answers this way): answers the task's pending input request. The owner's response
 * must name the request's key (`inputRequests`, or `_meta["taskhandle/input"].key`; others are
 * ignored, as the SEP says); see {@link respond} for `decline` and `cancel`. An approver the task
 * names, who may not read it and so cannot know the key, answers with any one key, `accept` only
 * (they decline by answering "reject"); it learns nothing of the task: a task it may not answer is
 * refused exactly as a missing one is.
 */
export async function updateTask(c: Call): Promise<Answer> {
  const p = paramsOf(
    UpdateParams,
    c.params,
    '{"taskId": string, "inputResponses": {key: {action, content}}}',
  );
  const own = await c.o.engine.record(c.owner, p.taskId).catch((err: unknown) => {
    if (isEngineError(err) && err.code === 'task-not-found') return undefined;
    throw err;
  });
  if (own) {
    const pending = pendingInput(own);
    const response = pending && p.inputResponses[pending.key];
    if (response) await respond(c, own.id, response);
    return acknowledged(c);
  }
  const responses = Object.values(p.inputResponses);
  const [only] = responses;
  if (responses.length !== 1 || only?.action !== 'accept') {
    throw invalidParams(
      'Failed to retrieve task: Task not found (it never existed, expired, or is not yours)',
    );
  }
  await answerTask(c.o.engine, c.o.audit, c.principal, p.taskId, answerParts(only.content));
  return acknowledged(c);
}

/** The extension's acknowledgement (`resultType: "complete"`); an empty result under 2025-11-25. */
const acknowledged = (c: Call) => (c.revision.kind === 'stateless' ? { resultType: 'complete' } : {});

/**
 * The owner's response to its task's question, by the elicitation spec's three actions (2025-11-25):
 * `accept` ("explicitly approved and submitted with data") answers it; `decline` ("explicitly
 * declined the request") cancels the task, as `tasks/cancel` would: the person refused the question
 * the work waits on; `cancel` ("dismissed without making an explicit choice", for which the spec
 * suggests "prompt again later") changes nothing: the task keeps waiting, its question open to
 * `tasks/update`, A2A, the inbox, or a later `tasks/result`, which asks again.
 */
export async function respond(
  c: Call | Pick<Call, 'o' | 'owner' | 'principal'>,
  taskId: string,
  r: ElicitResult,
) {
  if (r.action === 'cancel') return;
  try {
    if (r.action === 'accept') {
      await answerTask(c.o.engine, c.o.audit, c.principal, taskId, answerParts(r.content));
      return;
    }
    await c.o.engine.cancel(c.owner, taskId);
    c.o.audit('cancel', c.principal, taskId);
  } catch (err) {
    // Eventually consistent, as the SEP allows: a task that moved on meanwhile takes no answer.
    if (!isEngineError(err) || err.code === 'shutting-down') throw err;
  }
}
