import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artifactText, CSV_HEADER, csvLines, rpcStream, send, skillMessage, V1 } from './a2a.js';
import { type Agent, launch, userMessage } from './harness.js';

describe('the export skill and skill selection', () => {
  let agent: Agent;
  beforeAll(async () => {
    agent = await launch();
  });
  afterAll(async () => {
    await agent?.stop();
  });

  it('writes a CSV file artifact in base64 chunks', async () => {
    const { task } = await send(agent, skillMessage('export', { rows: 25, chunkRows: 10 }));
    expect(task.artifacts).toHaveLength(1);
    const [artifact] = task.artifacts;
    expect(artifact).toMatchObject({
      artifactId: `export-${task.id}`,
      name: 'export.csv',
      description: '25 rows as CSV',
    });
    expect(artifact.parts).toHaveLength(3);
    for (const part of artifact.parts)
      expect(part).toMatchObject({ filename: 'export.csv', mediaType: 'text/csv' });
    const lines = csvLines(artifactText(artifact));
    expect(lines).toHaveLength(26);
    expect(lines[0]).toBe(CSV_HEADER);
    expect(lines[1]).toBe('1,Customer 1,customer1@example.com,0,2026-01-01T00:00:00.000Z');
    expect(lines[25]).toMatch(/^25,Customer 25,customer25@example\.com,/);
  });

  it('shows a large export by reference: one file part linking its download, 5000 rows a chunk', async () => {
    const { task } = await send(agent, skillMessage('export', { rows: 20_000 }));
    const [artifact] = task.artifacts;
    expect(artifact.parts).toHaveLength(1);
    const [part] = artifact.parts;
    expect(part).toMatchObject({ filename: 'export.csv', mediaType: 'text/csv' });
    expect(part.raw).toBeUndefined();
    expect(part.url).toBe(`${agent.url}/v1/jobs/${task.id}/artifacts/export-${task.id}`);
    const file = await fetch(part.url, { headers: agent.credentials });
    const text = await file.text();
    expect(part.metadata['taskhandle.bytes']).toBe(Buffer.byteLength(text));
    const lines = csvLines(text);
    expect(lines).toHaveLength(20_001);
    expect(lines.filter((l) => l === CSV_HEADER)).toHaveLength(1);
    expect(lines[20_000]).toMatch(/^20000,Customer 20000,/);
  });

  it('writes a chunk larger than 1 MiB in appends of about 1 MiB: the job never holds a whole large chunk', async () => {
    const { task } = await send(agent, skillMessage('export', { rows: 30_000, chunkRows: 30_000 }));
    const stream = await rpcStream(agent, 'SubscribeToTask', { id: task.id }, { ...V1, lastEventId: '0' });
    const updates = (await stream.rest()).map((e) => e.data.result?.artifactUpdate).filter(Boolean);
    const sizes = updates.map((u) => Buffer.from(u.artifact.parts[0].raw, 'base64').length);
    expect(sizes.length).toBe(3);
    expect(Math.max(...sizes)).toBeLessThan(2 ** 20 + 100_000);
    expect(updates.map((u) => [u.append ?? false, u.lastChunk ?? false])).toEqual([
      [false, false],
      [true, false],
      [true, true],
    ]);
    const lines = csvLines(
      Buffer.concat(updates.map((u) => Buffer.from(u.artifact.parts[0].raw, 'base64'))).toString(),
    );
    expect(lines).toHaveLength(30_001);
    expect(lines[30_000]).toMatch(/^30000,Customer 30000,/);
  });

  it('an export of 0 rows is a header-only file', async () => {
    const { task } = await send(agent, skillMessage('export', { rows: 0 }));
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(artifactText(task.artifacts[0])).toBe(`${CSV_HEADER}\r\n`);
  });

  it('writes NDJSON when asked', async () => {
    const { task } = await send(agent, skillMessage('export', { rows: 3, format: 'ndjson' }));
    const [artifact] = task.artifacts;
    expect(artifact.name).toBe('export.ndjson');
    expect(artifact.parts[0].mediaType).toBe('application/x-ndjson');
    const rows = artifactText(artifact)
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows).toHaveLength(3);
    expect(rows[0]).toEqual({
      id: 1,
      name: 'Customer 1',
      email: 'customer1@example.com',
      amount: 0,
      created_at: '2026-01-01T00:00:00.000Z',
    });
    expect(rows.map((r) => r.id)).toEqual([1, 2, 3]);
  });

  it('exports the rows it is given, quoting CSV fields', async () => {
    const data = [
      { a: 1, b: 'x,y' },
      { a: 2, c: 'say "hi"' },
    ];
    const { task } = await send(agent, skillMessage('export', { data }));
    expect(artifactText(task.artifacts[0])).toBe('a,b,c\r\n1,"x,y",\r\n2,,"say ""hi"""\r\n');
  });

  it('picks the skill from message metadata', async () => {
    const message = userMessage('nap', { metadata: { skill: 'sleep', input: { seconds: 0 } } });
    const { task } = await send(agent, message);
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(task.status.message.parts).toEqual([{ text: 'Slept 0 s' }]);
  });

  it('falls back to the default skill (export) for plain text', async () => {
    const { task } = await send(agent, userMessage('export 50 rows'));
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(task.artifacts[0].description).toBe('50 rows as CSV');
    const lines = csvLines(artifactText(task.artifacts[0]));
    expect(lines).toHaveLength(51);
    expect(lines[0]).toBe(CSV_HEADER);
  });

  it('refuses an unknown skill with -32602 naming it', async () => {
    const { body } = await agent.rpc('SendMessage', { message: skillMessage('teleport', {}) }, V1);
    expect(body.error.code).toBe(-32602);
    expect(body.error.message).toContain('"teleport"');
    const meta = await agent.rpc(
      'SendMessage',
      { message: userMessage('x', { metadata: { skill: 'nope' } }) },
      V1,
    );
    expect(meta.body.error.code).toBe(-32602);
    expect(meta.body.error.message).toContain('"nope"');
  });

  it('refuses invalid input with -32602 naming the field', async () => {
    const rows = await agent.rpc('SendMessage', { message: skillMessage('export', { rows: -1 }) }, V1);
    expect(rows.body.error.code).toBe(-32602);
    expect(rows.body.error.message).toContain('input.rows');
    const format = await agent.rpc('SendMessage', { message: skillMessage('export', { format: 'xml' }) }, V1);
    expect(format.body.error.code).toBe(-32602);
    expect(format.body.error.message).toContain('input.format');
    const seconds = await agent.rpc(
      'SendMessage',
      { message: userMessage('x', { metadata: { skill: 'sleep', input: { seconds: 'long' } } }) },
      V1,
    );
    expect(seconds.body.error.code).toBe(-32602);
    expect(seconds.body.error.message).toContain('input.seconds');
  });

  it('refuses a message without messageId or parts with -32602 naming the field', async () => {
    const noId = await agent.rpc(
      'SendMessage',
      { message: { role: 'ROLE_USER', parts: [{ text: 'x' }] } },
      V1,
    );
    expect(noId.body.error.code).toBe(-32602);
    expect(noId.body.error.message).toContain('messageId');
    const noParts = await agent.rpc(
      'SendMessage',
      { message: { messageId: 'p1', role: 'ROLE_USER', parts: [] } },
      V1,
    );
    expect(noParts.body.error.code).toBe(-32602);
    expect(noParts.body.error.message).toContain('parts');
  });
});
