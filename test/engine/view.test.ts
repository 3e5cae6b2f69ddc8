import { describe, expect, it } from 'vitest';
import type { LoggedEvent, TaskEvent } from '../../src/engine/events.js';
import type { Message, TaskRecord } from '../../src/engine/task.js';
import { foldView } from '../../src/engine/view.js';

/** Where these views would link a stored artifact (none of them has one). */
const link = (taskId: string, artifactId: string) => `/files/${taskId}/${artifactId}`;

const record = (statusMessage?: Message): TaskRecord => ({
  id: 't',
  contextId: 'c',
  owner: 'o',
  skill: 's',
  state: 'completed',
  statusMessage,
  input: {},
  createdAt: 0,
  updatedAt: 0,
  expiresAt: 1,
  ttlMs: 1,
  pollIntervalMs: 1,
  lastSeq: 0,
  attempts: 1,
  interruptions: 0,
  cancelRequested: false,
  pushConfigs: 0,
  tenant: 'o',
  priority: 0,
  retries: 0,
  queueAt: 0,
});

const logged = (events: TaskEvent[]): LoggedEvent[] =>
  events.map((event, i) => ({ taskId: 't', seq: i + 1, at: 0, event }));

const msg = (id: string, role: Message['role'] = 'ROLE_USER'): Message => ({
  messageId: id,
  role,
  parts: [{ text: id }],
});

const chunk = (artifactId: string, text: string, append: boolean): TaskEvent => ({
  kind: 'artifact',
  artifact: { artifactId, parts: [{ text }] },
  append,
  lastChunk: false,
});

describe('foldView', () => {
  it('appends artifact chunks in order and lets a non-append update replace the artifact', () => {
    const view = foldView(
      record(),
      logged([
        chunk('a', '1', false),
        chunk('b', 'x', false),
        chunk('a', '2', true),
        chunk('b', 'y', false),
        chunk('c', 'first chunk appended to nothing', true),
      ]),
      undefined,
      link,
    );
    expect(view.artifacts.map((a) => [a.artifactId, a.parts.map((p) => p.text)])).toEqual([
      ['a', ['1', '2']],
      ['b', ['y']],
      ['c', ['first chunk appended to nothing']],
    ]);
  });

  it('builds history from messages and status messages, without the current status message', () => {
    const final = msg('final', 'ROLE_AGENT');
    const log = logged([
      { kind: 'message', message: msg('ask') },
      { kind: 'status', state: 'submitted' },
      { kind: 'progress', progress: { percent: 5 } },
      { kind: 'status', state: 'input-required', message: msg('prompt', 'ROLE_AGENT') },
      { kind: 'message', message: msg('answer') },
      { kind: 'status', state: 'completed', message: final },
    ]);
    const ids = (h: Message[]) => h.map((m) => m.messageId);
    expect(ids(foldView(record(final), log, undefined, link).history)).toEqual(['ask', 'prompt', 'answer']);
    expect(ids(foldView(record(final), log, 2, link).history)).toEqual(['prompt', 'answer']);
    expect(foldView(record(final), log, 0, link).history).toEqual([]);
    expect(ids(foldView(record(final), log, 10, link).history)).toEqual(['ask', 'prompt', 'answer']);
  });
});
