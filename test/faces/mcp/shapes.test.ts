import { describe, expect, it } from 'vitest';
import type { TaskRecord, TaskView } from '../../../src/engine/task.js';
import { elicitationId, parseElicitationId, parseEventId } from '../../../src/faces/mcp/follow.js';
import { answerParts, pendingInput } from '../../../src/faces/mcp/input-request.js';
import { callToolResult, taskError } from '../../../src/faces/mcp/result.js';
import { declaredBySession, declaresFormElicitation, sessionIdFor } from '../../../src/faces/mcp/session.js';
import { explicit } from '../../../src/faces/mcp/tools.js';

const link = (taskId: string, artifactId: string) =>
  `https://agent.example/v1/jobs/${taskId}/artifacts/${artifactId}`;

function record(over: Partial<TaskRecord> = {}): TaskRecord {
  return {
    id: 't-1',
    contextId: 'c-1',
    owner: 'api-key:acme/alice',
    skill: 'export',
    state: 'completed',
    input: {},
    createdAt: 0,
    updatedAt: 0,
    expiresAt: 1,
    ttlMs: 1,
    pollIntervalMs: 1000,
    lastSeq: 7,
    attempts: 1,
    interruptions: 0,
    cancelRequested: false,
    pushConfigs: 0,
    tenant: 'api-key:acme',
    priority: 0,
    retries: 0,
    queueAt: 0,
    ...over,
  };
}

const said = (text: string) => ({ messageId: 'm', role: 'ROLE_AGENT' as const, parts: [{ text }] });

describe('MCP result: a CallToolResult from what the task holds', () => {
  it("joins a streamed file's chunks into one embedded resource, text for text types", () => {
    const chunk = (s: string) => ({
      raw: Buffer.from(s).toString('base64'),
      mediaType: 'text/csv',
      filename: 'export.csv',
    });
    const view: TaskView = {
      record: record({ statusMessage: said('Exported 2 rows') }),
      history: [],
      artifacts: [{ artifactId: 'a', parts: [chunk('id\r\n1\r\n'), chunk('2\r\n')] }],
    };
    expect(callToolResult(view, link)).toEqual({
      content: [
        { type: 'text', text: 'Exported 2 rows' },
        {
          type: 'resource',
          resource: { uri: link('t-1', 'a'), mimeType: 'text/csv', text: 'id\r\n1\r\n2\r\n' },
        },
      ],
      isError: false,
    });
  });

  it('links a file stored by reference (never its bytes), and shows binary inline files as blobs', () => {
    const view: TaskView = {
      record: record(),
      history: [],
      artifacts: [
        {
          artifactId: 'big',
          name: 'export.csv',
          parts: [
            { url: link('t-1', 'big'), mediaType: 'text/csv', metadata: { 'taskhandle.bytes': 5_000_000 } },
          ],
        },
        { artifactId: 'png', parts: [{ raw: 'iVBORw0K', mediaType: 'image/png' }] },
        { artifactId: 'd', parts: [{ data: { rows: 3 } }] },
      ],
    };
    expect(callToolResult(view, link).content).toEqual([
      {
        type: 'resource_link',
        uri: link('t-1', 'big'),
        name: 'export.csv',
        mimeType: 'text/csv',
        size: 5_000_000,
      },
      { type: 'resource', resource: { uri: link('t-1', 'png'), mimeType: 'image/png', blob: 'iVBORw0K' } },
      { type: 'text', text: '{"rows":3}' },
    ]);
  });

  it('a rejection is a result that is an error; a failure and a cancel are JSON-RPC errors', () => {
    const rejected: TaskView = {
      record: record({ state: 'rejected', statusMessage: said('Rejected by acme/bob') }),
      history: [],
      artifacts: [],
    };
    expect(callToolResult(rejected, link)).toEqual({
      content: [{ type: 'text', text: 'Rejected by acme/bob' }],
      isError: true,
    });
    expect(
      taskError(record({ state: 'failed', statusMessage: said('No answer came before the deadline') })),
    ).toEqual({
      code: -32603,
      message: 'No answer came before the deadline',
    });
    expect(taskError(record({ state: 'canceled' })).code).toBe(-32600);
  });
});

describe('MCP input requests and their answers', () => {
  it('keys a pending question by where the wait began, so that a later one has another key', () => {
    expect(pendingInput(record({ state: 'working' }))).toBeUndefined();
    const first = pendingInput(
      record({ state: 'input-required', lastSeq: 4, statusMessage: said('Approve?') }),
    );
    const second = pendingInput(
      record({ state: 'input-required', lastSeq: 9, statusMessage: said('Approve?') }),
    );
    expect(first?.key).toBe('ask-4');
    expect(second?.key).toBe('ask-9');
    expect(first?.request.params.message).toBe('Approve?');
  });

  it('an answer of one text field is the text; any other content is a data part', () => {
    expect(answerParts({ answer: 'approve' })).toEqual([{ text: 'approve' }]);
    expect(answerParts({ decision: 'reject', comment: 'no' })).toEqual([
      { data: { decision: 'reject', comment: 'no' } },
    ]);
    expect(answerParts({ answer: '' })).toEqual([{ data: { answer: '' } }]);
    expect(answerParts(undefined)).toEqual([{ data: {} }]);
  });

  it("an elicitation's id names its task and question, and nothing else parses as one", () => {
    const id = elicitationId('01a2:odd:id', 'ask-12');
    expect(parseElicitationId(id)).toEqual({ taskId: '01a2:odd:id', key: 'ask-12' });
    // Asked again, it is another request (a request id is never reused), about the same question.
    expect(elicitationId('01a2:odd:id', 'ask-12')).not.toBe(id);
    expect(parseElicitationId('input:ask-12:01a2:odd:id')).toEqual({ taskId: '01a2:odd:id', key: 'ask-12' });
    for (const other of [7, 'input:ask-x:t', 'input:ask-1:', 'ask-1:t', null])
      expect(parseElicitationId(other)).toBeUndefined();
  });

  it('a stream event id that is not ours, or altered, resumes nothing', () => {
    for (const bad of ['0', 'abc.1', 'e30.1', `${Buffer.from('{"id":1}').toString('base64url')}.2`, '']) {
      expect(parseEventId(bad)).toBeUndefined();
    }
    const followed = { id: 3, method: 'tasks/result', taskId: 't-1', statusNotifications: true };
    const token = Buffer.from(JSON.stringify(followed)).toString('base64url');
    expect(parseEventId(`${token}.12`)).toEqual({ followed, afterSeq: 12 });
    expect(parseEventId(`${token}.end`)).toEqual({ followed, afterSeq: 'end' });
  });
});

describe('MCP session ids: what the client declared at initialize, and nothing kept', () => {
  const requestWith = (id?: string) =>
    ({ get: (name: string) => (name.toLowerCase() === 'mcp-session-id' ? id : undefined) }) as never;

  it('form-mode elicitation is declared by elicitation.form or an empty elicitation, not by url alone', () => {
    expect(declaresFormElicitation({ elicitation: {} })).toBe(true);
    expect(declaresFormElicitation({ elicitation: { form: {} } })).toBe(true);
    expect(declaresFormElicitation({ elicitation: { form: {}, url: {} } })).toBe(true);
    for (const none of [
      { elicitation: { url: {} } },
      {},
      undefined,
      { elicitation: true },
      { elicitation: [] },
    ])
      expect(declaresFormElicitation(none)).toBe(false);
  });

  it('the id carries it, in visible ASCII, different each time; other ids declare nothing', () => {
    const declared = sessionIdFor({ elicitation: {} }, '2025-11-25');
    expect(declared).toMatch(/^[\x21-\x7e]+$/);
    expect(sessionIdFor({ elicitation: {} }, '2025-11-25')).not.toBe(declared);
    expect(declaredBySession(requestWith(declared))).toEqual({ formElicitation: true });
    expect(declaredBySession(requestWith(sessionIdFor({}, '2025-11-25')))).toEqual({
      formElicitation: false,
    });
    // 2025-03-26 has no elicitation to negotiate.
    const old = sessionIdFor({ elicitation: {} }, '2025-03-26');
    expect(declaredBySession(requestWith(old))).toEqual({ formElicitation: false });
    for (const other of [undefined, '', 'th1.f.short', `${declared}x`, 'f'])
      expect(declaredBySession(requestWith(other))).toEqual({ formElicitation: false });
  });
});

describe('MCP tool schemas: no empty {} sub-schema, the same meaning', () => {
  const ANY = { type: ['string', 'number', 'boolean', 'object', 'array', 'null'] };

  it('leaves out an empty items or additionalProperties, types an empty property or list entry, keeps values', () => {
    expect(
      explicit({
        type: 'object',
        properties: {
          list: { type: 'array', items: {} },
          rows: { type: 'object', additionalProperties: {}, propertyNames: { type: 'string' } },
          anything: {},
          either: { anyOf: [{ type: 'string' }, {}] },
          fixed: { type: 'object', default: {}, const: {}, enum: [{}], examples: [{}] },
          none: { not: {} },
        },
        $defs: { free: {} },
      }),
    ).toEqual({
      type: 'object',
      properties: {
        list: { type: 'array' },
        rows: { type: 'object', propertyNames: { type: 'string' } },
        anything: ANY,
        either: { anyOf: [{ type: 'string' }, ANY] },
        fixed: { type: 'object', default: {}, const: {}, enum: [{}], examples: [{}] },
        none: { not: ANY },
      },
      $defs: { free: ANY },
    });
  });

  it('types rather than leaves out where unevaluated* would see the difference', () => {
    expect(
      explicit({ type: 'array', prefixItems: [{ type: 'string' }], items: {}, unevaluatedItems: false }),
    ).toEqual({ type: 'array', prefixItems: [{ type: 'string' }], items: ANY, unevaluatedItems: false });
  });
});
