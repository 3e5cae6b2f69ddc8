import type {
  AgentCard,
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetExtendedAgentCardRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  ListTasksRequest,
  ListTasksResponse,
  Message,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
  TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import { ExtendedAgentCardNotConfiguredError, RequestMalformedError } from '@a2a-js/sdk/errors';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import type { Logger } from 'pino';
import { type Principal, policyOf } from '../../auth/principal.js';
import type { Engine } from '../../engine/engine.js';
import { EngineError, isEngineError } from '../../engine/errors.js';
import type { LoggedEvent } from '../../engine/events.js';
import { MAX_POLL_WAIT_MS } from '../../engine/generation.js';
import type { AnswerReceipt } from '../../engine/grant.js';
import { DEFAULT_CONFIG_ID } from '../../engine/push-configs.js';
import { settled } from '../../engine/streams.js';
import type { Message as EngineMessage, TaskView } from '../../engine/task.js';
import type { AddressPolicy } from '../../push/address-policy.js';
import type { SecretBox } from '../../push/secret-box.js';
import type { Audit } from '../audit.js';
import { callState } from './call-state.js';
import { type Transport, toProtocolError } from './errors.js';
import { checkInputModes } from './input-modes.js';
import { toNewPushConfig, toSdkPushConfig } from './push-config-wire.js';
import { receiptEvent, toSdkReceipt } from './receipt.js';
import { type SkillCall, skillCallOf } from './skill-call.js';
import { withStillWorkingNote } from './still-working.js';
import type { TaskCache } from './task-cache.js';
import type { ProtocolVersion } from './version.js';
import {
  fromSdkState,
  toEngineMessage,
  toSdkMessage,
  toSdkTask,
  toStreamResponse,
  withEventId,
} from './wire.js';

export interface HandlerOptions {
  engine: Engine;
  /** v1.0 GetTask results per task version (task-cache.ts). */
  tasks: TaskCache;
  card: () => AgentCard;
  /**
   * The card for authenticated callers (GetExtendedAgentCard) as the caller's version and transport
   * send it (its signatures are over that form); undefined when callers are anonymous.
   */
  extendedCard: (version: ProtocolVersion, transport: Transport) => AgentCard | undefined;
  audit: Audit;
  /**
   * A blocking send returns the task as it stands after this long, its answer's status message
   * saying so (still-working.ts); docs/CONFORMANCE.md says why this long.
   */
  blockingTimeoutMs: number;
  /** Which webhook addresses callers may register (the SSRF guard). */
  pushPolicy: AddressPolicy;
  /** Seals the webhooks' tokens and credentials before they are stored. */
  secrets: SecretBox;
  /** Where internal failures are logged (callers get no detail of them). */
  logger: Logger;
}

/**
 * What a send gave: the agent's direct reply, the caller's own task, or (to an approver, who
 * answered a task that is not theirs) only the receipt of the answer.
 */
type Sent =
  | { kind: 'message'; message: EngineMessage }
  | { kind: 'task'; view: TaskView; created: boolean }
  | { kind: 'answered'; receipt: AnswerReceipt };

/** How a streaming send's stream begins ({@link EngineRequestHandler.startStream}). */
export type StreamStart =
  | { kind: 'once'; response: StreamResponse }
  | { kind: 'task'; taskId: string; slot: () => void };

/**
 * How long a blocking send waits when BLOCKING_TIMEOUT_MS is unset: 10 s under the 300 s after which
 * Node's fetch (undici's headersTimeout and bodyTimeout) gives up, on which the common JS clients
 * (@a2a-js/sdk, a2a-ai-provider, Mastra's client) send without a timeout of their own; ADK waits
 * 600 s. docs/CONFORMANCE.md has the evidence.
 */
export const A2A_BLOCKING_TIMEOUT_MS = 290_000;

const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 100;

/**
 * The SDK's request-handler contract, served by the engine. The SDK's transports (JSON-RPC,
 * REST, v0.3 compatibility) parse and serialize; all state lives in the engine's store.
 */
export class EngineRequestHandler implements A2ARequestHandler {
  readonly #engine: Engine;
  readonly #options: HandlerOptions;

  constructor(options: HandlerOptions) {
    this.#engine = options.engine;
    this.#options = options;
  }

  async getAgentCard(): Promise<AgentCard> {
    return this.#options.card();
  }

  async getAuthenticatedExtendedAgentCard(
    _p: GetExtendedAgentCardRequest,
    context: ServerCallContext,
  ): Promise<AgentCard> {
    const { version, transport } = callState(context);
    const extended = this.#options.extendedCard(version, transport);
    // Callers reach this only authenticated (or anonymous when no authentication is configured).
    if (!extended || callState(context).principal.via === 'anonymous') {
      throw new ExtendedAgentCardNotConfiguredError(
        'This agent has no extended agent card for anonymous callers',
      );
    }
    return extended;
  }

  async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    const state = callState(context);
    return this.#guard(async () => {
      const { version } = state;
      const result = await this.#send(params, context);
      this.#audited(state.principal, params, result);
      if (result.kind === 'message') return toSdkMessage(result.message);
      if (result.kind === 'answered') return toSdkReceipt(result.receipt);
      const historyLength = params.configuration?.historyLength;
      // v1.0 blocks unless told otherwise; v0.3 blocks only when `blocking: true` was sent (the SDK's
      // v0.3 translation drops an absent configuration, so no configuration means non-blocking).
      const returnImmediately = params.configuration?.returnImmediately ?? version === '0.3';
      let view = result.view;
      if (!returnImmediately && !settled(view.record.state)) {
        const since = Date.now();
        // A face that can (JSON-RPC, REST) keeps the answer alive from now on: see hold.ts.
        state.hold?.();
        await this.#engine.waitUntil(view.record.id, settled, this.#options.blockingTimeoutMs, state.signal);
        view = await this.#engine.get(view.record.owner, view.record.id, historyLength);
        // Answered before the task settled: the answer's status message says so (not stored).
        if (!settled(view.record.state))
          return withStillWorkingNote(toSdkTask(view), view.record, Date.now() - since, version);
      } else if (historyLength !== undefined) {
        view = await this.#engine.get(view.record.owner, view.record.id, historyLength);
      }
      return toSdkTask(view);
    }, state.transport);
  }

  async *sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse> {
    const start = await this.startStream(params, context);
    if (start.kind === 'once') {
      yield start.response;
      return;
    }
    yield* this.#stream(context, start.taskId, false, start.slot);
  }

  /**
   * A streaming send up to its stream, for a face that streams it itself (grpc-streams.ts) as
   * {@link sendMessageStream} does: the one event of a direct reply or of an approver's receipt,
   * or the caller's task to stream, with the stream's slot (MAX_STREAMS), which the stream gives back.
   */
  async startStream(params: SendMessageRequest, context: ServerCallContext): Promise<StreamStart> {
    const state = callState(context);
    // The stream's slot is taken first: past MAX_STREAMS nothing is created (nor run) for a stream
    // the caller would never get.
    const slot = await this.#guard(async () => this.#engine.reserveStream(state.owner), state.transport);
    let result: Sent;
    try {
      result = await this.#guard(() => this.#send(params, context), state.transport);
    } catch (err) {
      slot();
      throw err;
    }
    this.#audited(state.principal, params, result);
    if (result.kind === 'message') {
      slot();
      return {
        kind: 'once',
        response: { payload: { $case: 'message', value: toSdkMessage(result.message) } },
      };
    }
    // An approver's stream is the receipt of their answer and nothing more: it has no event id (the
    // owner's log is not theirs to resume) and ends at once.
    if (result.kind === 'answered') {
      slot();
      return { kind: 'once', response: receiptEvent(result.receipt) };
    }
    return { kind: 'task', taskId: result.view.record.id, slot };
  }

  async *resubscribe(
    params: SubscribeToTaskRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse> {
    yield* this.#stream(context, requireId(params.id), true);
  }

  async getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    const state = callState(context);
    const { owner } = state;
    if (params.historyLength !== undefined && params.historyLength < 0) {
      throw new RequestMalformedError('historyLength must not be negative');
    }
    const id = requireId(params.id);
    // A long poll (the generations extension): answered as a GetTask once the task is past the
    // caller's generation, or once the wait ends.
    const after = state.generation?.currentGeneration;
    if (after !== undefined) {
      await this.#guard(
        () =>
          this.#engine.awaitGeneration(owner, id, after, state.pollWaitMs ?? MAX_POLL_WAIT_MS, state.signal),
        state.transport,
      );
    }
    // v1.0's transports only serialize the Task: a v1.0 caller may get the one shared per version.
    // v0.3's translate it into their own shape and get one of their own.
    if (callState(context).version === '1.0')
      return this.#guard(() => this.#options.tasks.task(owner, id, params.historyLength));
    return this.#guard(async () => toSdkTask(await this.#engine.get(owner, id, params.historyLength)));
  }

  async listTasks(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const { owner, principal } = callState(context);
    const pageSize = params.pageSize ?? DEFAULT_PAGE_SIZE;
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE) {
      throw new RequestMalformedError(`pageSize must be between 1 and ${MAX_PAGE_SIZE}`);
    }
    if (params.historyLength !== undefined && params.historyLength < 0) {
      throw new RequestMalformedError('historyLength must not be negative');
    }
    let statusAfter: number | undefined;
    if (params.statusTimestampAfter) {
      const at = Date.parse(params.statusTimestampAfter);
      if (Number.isNaN(at)) throw new RequestMalformedError('statusTimestampAfter is not a timestamp');
      // The spec keeps tasks updated at or after the time; the store's filter is strictly after (ms).
      statusAfter = at - 1;
    }
    const state = params.status ? fromSdkState(params.status) : undefined;
    if (params.status && !state) throw new RequestMalformedError('status is not a task state');
    // Anonymous callers share one principal: listing would let each enumerate the others' tasks.
    if (principal.via === 'anonymous') return { tasks: [], nextPageToken: '', pageSize, totalSize: 0 };
    return this.#guard(async () => {
      const { views, page } = await this.#engine.list(owner, {
        contextId: params.contextId || undefined,
        state,
        statusAfter,
        pageSize,
        pageToken: params.pageToken || undefined,
        historyLength: params.historyLength,
        withArtifacts: params.includeArtifacts === true,
      });
      return {
        tasks: views.map(toSdkTask),
        nextPageToken: page.nextPageToken,
        pageSize,
        totalSize: page.totalSize,
      };
    });
  }

  async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    const { owner, principal, transport } = callState(context);
    const id = requireId(params.id);
    const ifGeneration = callState(context).generation?.ifGenerationMatch;
    const task = await this.#guard(
      async () => toSdkTask(await this.#engine.cancel(owner, id, ifGeneration)),
      transport,
    );
    this.#options.audit('cancel', principal, id);
    return task;
  }

  async createTaskPushNotificationConfig(
    params: TaskPushNotificationConfig,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    const { owner, version, principal } = callState(context);
    const config = toNewPushConfig(params, version, this.#options.pushPolicy, this.#options.secrets);
    const taskId = requireId(params.taskId);
    const stored = await this.#guard(() => this.#engine.push.put(owner, taskId, config));
    this.#options.audit('push-config-set', principal, taskId);
    return toSdkPushConfig(stored);
  }

  async getTaskPushNotificationConfig(
    params: GetTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    const { owner } = callState(context);
    const taskId = requireId(params.taskId);
    // v0.3 lets Get omit the config id: the task's default one then.
    const id = params.id || DEFAULT_CONFIG_ID;
    return this.#guard(async () => toSdkPushConfig(await this.#engine.push.get(owner, taskId, id)));
  }

  async listTaskPushNotificationConfigs(
    params: ListTaskPushNotificationConfigsRequest,
    context: ServerCallContext,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    const { owner } = callState(context);
    const configs = await this.#guard(() => this.#engine.push.list(owner, requireId(params.taskId)));
    return { configs: configs.map(toSdkPushConfig), nextPageToken: '' };
  }

  async deleteTaskPushNotificationConfig(
    params: DeleteTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<void> {
    const { owner, principal } = callState(context);
    if (!params.id) throw new RequestMalformedError('push notification config id is required');
    const taskId = requireId(params.taskId);
    await this.#guard(() => this.#engine.push.delete(owner, taskId, params.id));
    this.#options.audit('push-config-delete', principal, taskId);
  }

  /**
   * Delivers a caller's message: to the task it names, or to a new task of the skill it selects
   * (see skill-call.ts). A message whose (owner, messageId) was already delivered returns that task
   * and changes nothing; a webhook given with it is registered with the task, in the same transaction.
   */
  async #send(params: SendMessageRequest, context: ServerCallContext): Promise<Sent> {
    const { owner, principal, version, generation } = callState(context);
    const message = toEngineMessage(params.message);
    const push = this.#inlinePush(params, version);
    const policy = policyOf(principal);
    if (message.taskId) {
      checkInputModes(this.#options.card(), undefined, message);
      const answered = await this.#engine.answer({
        owner,
        taskId: message.taskId,
        message,
        push,
        policy,
        ifGeneration: generation?.ifGenerationMatch,
      });
      return answered.grant === 'approver'
        ? { kind: 'answered', receipt: answered.receipt }
        : { kind: 'task', view: answered.view, created: false };
    }
    const call = await this.#skillCall(owner, message);
    checkInputModes(this.#options.card(), call.skill, message);
    const skill = this.#engine.skills.use(call.skill, policy);
    const reply = 'directReply' in skill ? skill.directReply?.(message) : undefined;
    if (reply) return { kind: 'message', message: reply };
    const { view, created } = await this.#engine.submit({
      owner,
      skill: call.skill,
      input: call.input,
      message,
      key: message.messageId,
      contextId: message.contextId,
      metadata: params.metadata,
      push,
      policy,
      // The engine checks it against its bounds, naming the field.
      priority: message.metadata?.priority,
    });
    return { kind: 'task', view, created };
  }

  /**
   * The skill a new task's message asks for. A message that names none but carries a `contextId`
   * may be an answer sent without its `taskId` (ADK answers an input-required task so): when the
   * caller has exactly one task waiting for input in that context, the refusal names it. Only the
   * caller's own tasks are looked at.
   */
  async #skillCall(owner: string, message: EngineMessage): Promise<SkillCall> {
    try {
      return skillCallOf(message, this.#engine.skills);
    } catch (err) {
      if (!isEngineError(err) || err.code !== 'unknown-skill' || !message.contextId) throw err;
      const { views } = await this.#engine.list(owner, {
        contextId: message.contextId,
        state: 'input-required',
        pageSize: 2,
        historyLength: 0,
        withArtifacts: false,
      });
      const waiting = views.length === 1 ? views[0]?.record.id : undefined;
      if (waiting === undefined) throw err;
      throw new EngineError(
        'unknown-skill',
        `Task ${waiting} of this context waits for your input: to answer it, send this message with "taskId": "${waiting}" ` +
          `(a message with a contextId and no taskId starts a new task, and this one ${err.message.charAt(0).toLowerCase()}${err.message.slice(1)})`,
      );
    }
  }

  /** A send made a task, or gave a message to one (retries of a delivered message change nothing). */
  #audited(principal: Principal, params: SendMessageRequest, result: Sent): void {
    if (result.kind === 'answered') {
      const { taskId, answeredBy } = result.receipt;
      this.#options.audit('input', principal, taskId, { grant: 'approver', approver: answeredBy });
      return;
    }
    if (result.kind !== 'task') return;
    const taskId = result.view.record.id;
    if (result.created) this.#options.audit('create', principal, taskId);
    else if (params.message?.taskId) this.#options.audit('input', principal, taskId, { grant: 'owner' });
  }

  /** The webhook a send may carry in its configuration. */
  #inlinePush(params: SendMessageRequest, version: string) {
    const config = params.configuration?.taskPushNotificationConfig;
    return config && toNewPushConfig(config, version, this.#options.pushPolicy, this.#options.secrets);
  }

  /**
   * A task's stream as SDK events. This is the call's StreamCursor's one writer: before each yield
   * the event's log sequence number goes to it, where the face's SSE writer reads it as the event id.
   */
  async *#stream(
    context: ServerCallContext,
    id: string,
    requireActive: boolean,
    slot?: () => void,
  ): AsyncGenerator<StreamResponse> {
    const state = callState(context);
    const { owner } = state;
    try {
      if (state.lastEventId !== undefined) {
        // A resume yields nothing until the task's next event: say at once that the stream stands.
        await this.#guard(() => this.#engine.record(owner, id));
        state.cursor.stands();
      }
      const items = this.#engine.stream(owner, id, {
        afterSeq: state.lastEventId,
        requireActive: requireActive && state.lastEventId === undefined,
        signal: state.signal,
        slot,
      });
      try {
        for await (const item of items) {
          // A client that does not read holds its stream here (the store keeps the rest), not in memory.
          await state.drained();
          let response: StreamResponse | undefined;
          if (item.kind === 'task') {
            response = withEventId({ payload: { $case: 'task', value: toSdkTask(item.view) } }, item.seq);
            state.cursor.wrote(item.seq);
          } else {
            // Artifact chunks stored out of the log stream as they were written.
            response = streamResponseOf(await this.#engine.withContent(item.entry), item.contextId);
            const closing = item.entry.event.kind === 'status' && settled(item.entry.event.state);
            state.cursor.wrote(item.entry.seq, closing);
          }
          if (response) yield response;
        }
      } catch (err) {
        throw this.#protocolError(err, state.transport);
      }
    } finally {
      // A reserved slot goes back however the stream ended, even one that never began (it goes back once).
      slot?.();
    }
  }

  /** Runs engine work, turning engine errors into the SDK's protocol errors. */
  async #guard<T>(work: () => Promise<T>, transport?: Transport): Promise<T> {
    try {
      return await work();
    } catch (err) {
      throw this.#protocolError(err, transport);
    }
  }

  /** An internal failure (the store unreachable, a bug) is logged here; the caller sees no detail of it. */
  #protocolError(err: unknown, transport?: Transport): unknown {
    return toProtocolError(err, transport, (cause) =>
      this.#options.logger.error({ err: cause }, 'internal error'),
    );
  }
}

/**
 * Every subscriber of a task receives the same log entry objects from the event hub: convert each
 * once, not once per subscriber (a transition watched by thousands of streams). Each event carries
 * its id (the entry's sequence number) in its metadata too (wire.ts, withEventId).
 */
const converted = new WeakMap<LoggedEvent, StreamResponse | null>();
function streamResponseOf(entry: LoggedEvent, contextId: string): StreamResponse | undefined {
  let response = converted.get(entry);
  if (response === undefined) {
    const event = toStreamResponse(entry, contextId);
    response = event ? withEventId(event, entry.seq) : null;
    converted.set(entry, response);
  }
  return response ?? undefined;
}

function requireId(id: string | undefined): string {
  if (!id?.trim()) throw new RequestMalformedError('task id is required');
  return id;
}
