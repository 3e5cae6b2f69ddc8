import type { LoggedEvent } from '../../engine/events.js';
import type { OperatorTask } from '../../engine/operator.js';
import type { DeliveryAttempt, OutboxEntry } from '../../engine/operator-port.js';
import type { Part, TaskRecord } from '../../engine/task.js';
import { messageText } from '../handle.js';
import { readableOwner } from '../inbox/waiting.js';

/** Text shown of a part, an input or a message at most: the page is for looking, downloads are for reading. */
const SHOWN_CHARS = 2000;

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());
const clip = (text: string) => (text.length > SHOWN_CHARS ? `${text.slice(0, SHOWN_CHARS)}…` : text);

/** One task in the list. */
export function listItem(r: TaskRecord) {
  return {
    id: r.id,
    owner: readableOwner(r.owner),
    skill: r.skill,
    state: r.state,
    createdAt: iso(r.createdAt),
    updatedAt: iso(r.updatedAt),
    ...(r.progress?.percent === undefined ? {} : { percent: r.progress.percent }),
    status: clip(messageText(r.statusMessage)),
  };
}

/** One task's page: its handle fields, timeline and webhook deliveries. */
export function taskPage(t: OperatorTask, artifactPath: (artifactId: string) => string) {
  const r = t.record;
  return {
    ...listItem(r),
    contextId: r.contextId,
    expiresAt: iso(r.expiresAt),
    ttlMs: r.ttlMs,
    pollIntervalMs: r.pollIntervalMs,
    progress: r.progress ?? null,
    runs: r.attempts,
    interruptions: r.interruptions,
    // Which runner or remote worker runs it now, and until when its last heartbeat holds it.
    heldBy: r.lease?.holder ?? null,
    leaseUntil: iso(r.lease?.expiresAt),
    cancelRequested: r.cancelRequested,
    approvers: r.approvers ?? [],
    inputDeadline: iso(r.inputDeadline),
    input: clip(JSON.stringify(r.input) ?? ''),
    events: t.events.map((e) => timelineEntry(e, artifactPath)),
    eventsOmitted: t.eventsOmitted,
    webhooks: t.webhooks.map((w) => ({ id: w.id, destination: destination(w.url), allEvents: w.allEvents })),
    attempts: t.attempts.map(attemptView),
    outbox: t.outbox.map(outboxView),
  };
}

/** Where a webhook goes, without its query string or credentials (a secret may live there). */
function destination(url: string): string {
  if (!URL.canParse(url)) return '(not a URL)';
  const u = new URL(url);
  return `${u.origin}${u.pathname}`;
}

function timelineEntry(e: LoggedEvent, artifactPath: (artifactId: string) => string) {
  const base = { seq: e.seq, at: iso(e.at), kind: e.event.kind };
  const ev = e.event;
  switch (ev.kind) {
    case 'status':
      return { ...base, state: ev.state, text: clip(messageText(ev.message)) };
    case 'progress':
      return {
        ...base,
        ...(ev.progress.percent === undefined ? {} : { percent: ev.progress.percent }),
        text: clip(ev.progress.message ?? ''),
      };
    case 'message':
      return {
        ...base,
        role: ev.message.role === 'ROLE_USER' ? 'user' : 'agent',
        text: clip(messageText(ev.message)),
      };
    case 'artifact':
      return {
        ...base,
        artifactId: ev.artifact.artifactId,
        name: ev.artifact.name ?? '',
        append: ev.append,
        lastChunk: ev.lastChunk,
        parts: ev.artifact.parts.map(partView),
        download: artifactPath(ev.artifact.artifactId),
      };
  }
}

function partView(p: Part) {
  if (p.blob)
    return { kind: 'stored', bytes: p.blob.size, filename: p.filename ?? '', mediaType: p.mediaType ?? '' };
  if (p.text !== undefined) return { kind: 'text', text: clip(p.text) };
  if (p.raw !== undefined)
    return { kind: 'bytes', bytes: Math.floor((p.raw.length * 3) / 4), filename: p.filename ?? '' };
  if (p.url !== undefined) return { kind: 'url', url: clip(p.url) };
  return { kind: 'data', text: clip(JSON.stringify(p.data) ?? '') };
}

const attemptView = (a: DeliveryAttempt) => ({
  webhook: a.configId,
  seq: a.seq,
  attempt: a.attempt,
  at: iso(a.at),
  durationMs: a.durationMs,
  status: a.status ?? null,
  outcome: a.outcome,
  error: a.error ?? '',
});

const outboxView = (o: OutboxEntry) => ({
  webhook: o.configId,
  seq: o.seq,
  attempts: o.attempts,
  nextAttemptAt: iso(o.nextAttemptAt),
  lastError: o.lastError ?? '',
  deadAt: iso(o.deadAt),
  dead: o.deadAt !== undefined,
});
