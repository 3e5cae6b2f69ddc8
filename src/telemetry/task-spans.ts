import { ROOT_CONTEXT, SpanStatusCode, trace } from '@opentelemetry/api';
import { ATTR, CREATED_BY, currentAgentName, inSpan, linkTo, type TraceCarrier } from './tracing.js';

/** What a job run's span needs of its task (the engine's record has it all). */
export interface RunSubject {
  id: string;
  contextId: string;
  skill: string;
  attempts: number;
  trace?: TraceCarrier;
}

/**
 * A job run as a span of a trace of its own (`invoke_agent`, GenAI's agent invocation), linked to
 * the span that created the task: the run happens later, maybe after a restart or on another
 * instance, and the link (kept in the task row) is what ties it to the request that asked for it.
 */
export function traceRun<T>(task: RunSubject, work: () => Promise<T>): Promise<T> {
  const agent = currentAgentName();
  return inSpan(
    agent ? `invoke_agent ${agent}` : 'invoke_agent',
    {
      // Not the context it was claimed in (a create's, when the claim followed it at once): a root.
      parent: ROOT_CONTEXT,
      links: linkTo(task.trace, CREATED_BY),
      attributes: {
        [ATTR.operation]: 'invoke_agent',
        ...(agent ? { [ATTR.agentName]: agent } : {}),
        [ATTR.conversation]: task.contextId,
        [ATTR.taskId]: task.id,
        [ATTR.skill]: task.skill,
        [ATTR.attempt]: task.attempts,
      },
    },
    work,
  );
}

/**
 * How the run in progress ended, on its span: the state it left the task in, or (when it wrote
 * none: released at shutdown, lease lost, store failed) how it stopped.
 */
export function runEnded(state: string | undefined, ending?: string): void {
  const span = trace.getActiveSpan();
  if (!span?.isRecording()) return;
  if (state) span.setAttribute(ATTR.state, state);
  if (ending) span.setAttribute('taskhandle.run.ending', ending);
  if (state === 'failed' || ending === 'failed' || ending === 'store-failed') {
    span.setAttribute('error.type', ending ?? 'failed');
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
}

/** A caller's message to an existing task (an answer to input-required, or a note), as a span. */
export function traceAnswer<T>(taskId: string, work: () => Promise<T>): Promise<T> {
  return inSpan('answer_task', { attributes: { [ATTR.taskId]: taskId } }, work);
}

/**
 * Notes what an answer found and did on the active span: the state it found, whether it queued a
 * run, and a link to the span that created the task (`task.trace`), which the run it queues links to
 * as well: from the answer's trace a viewer reaches the task's creation, and from there its runs.
 */
export function answerTook(
  task: { state: string; trace?: TraceCarrier },
  requeued: boolean,
  grant: string,
): void {
  const span = trace.getActiveSpan();
  if (!span?.isRecording()) return;
  span.setAttributes({
    [ATTR.state]: task.state,
    'taskhandle.answer.requeued': requeued,
    'taskhandle.answer.grant': grant,
  });
  span.addLinks(linkTo(task.trace, CREATED_BY));
}
