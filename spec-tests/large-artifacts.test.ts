import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CSV_HEADER, csvLines, rpcStream, send, skillMessage, V1 } from './a2a.js';
import { type Agent, launch } from './harness.js';
import { dropSchema, freshSchema, postgresUrl, skipWithoutPostgres } from './postgres.js';

/** 20,000 generated rows: about 1.8 MB of CSV in 4 chunks, far past the 64 KiB inline size. */
const ROWS = 20_000;

const noPostgres = await skipWithoutPostgres();
const schema = freshSchema();
const STORES: { store: string; env: Record<string, string>; skip: boolean }[] = [
  { store: 'SQLite', env: {}, skip: false },
  {
    store: 'PostgreSQL',
    env: { DATABASE_URL: postgresUrl, DATABASE_SCHEMA: schema },
    skip: noPostgres !== undefined,
  },
];

describe.each(STORES)(
  'large artifacts travel by reference, stored beside the log ($store)',
  ({ env, skip }) => {
    let agent: Agent;
    let taskId: string;
    let fileUrl: string;
    let size: number;
    let whole: Buffer;
    beforeAll(async () => {
      if (skip) return;
      agent = await launch({ apiKeys: { alice: 'acme', mallory: 'evil' }, env });
      const { task } = await send(agent, skillMessage('export', { rows: ROWS }));
      expect(task.status.state).toBe('TASK_STATE_COMPLETED');
      taskId = task.id;
      const [part] = task.artifacts[0].parts;
      fileUrl = part.url;
      size = part.metadata['taskhandle.bytes'];
      whole = Buffer.from(await (await fetch(fileUrl, { headers: agent.credentials })).arrayBuffer());
    });
    afterAll(async () => {
      await agent?.stop();
      if (!skip && env.DATABASE_SCHEMA) await dropSchema(env.DATABASE_SCHEMA);
    });
    beforeEach(({ skip: skipTest }) => {
      if (skip) skipTest();
    });

    const get = (url: string, headers: Record<string, string> = {}) =>
      fetch(url, { headers: { ...agent.credentials, ...headers } });

    it('GetTask carries one file part with the download URL and the size, never the bytes, on v1.0 and v0.3', async () => {
      const v1 = await agent.rpc('GetTask', { id: taskId }, V1);
      const text = JSON.stringify(v1.body);
      expect(text.length).toBeLessThan(8_000);
      expect(v1.body.result.artifacts[0].parts).toEqual([
        {
          url: `${agent.url}/v1/jobs/${taskId}/artifacts/export-${taskId}`,
          filename: 'export.csv',
          mediaType: 'text/csv',
          metadata: { 'taskhandle.bytes': size },
        },
      ]);
      const v03 = await agent.rpc('tasks/get', { id: taskId }, { version: '0.3' });
      expect(JSON.stringify(v03.body).length).toBeLessThan(8_000);
      expect(v03.body.result.artifacts[0].parts[0]).toMatchObject({
        kind: 'file',
        file: { uri: fileUrl, name: 'export.csv', mimeType: 'text/csv' },
      });
      const rest = await get(`${agent.url}/rest/tasks/${taskId}`, { 'A2A-Version': '1.0' });
      const body = (await rest.json()) as { artifacts: { parts: { url: string }[] }[] };
      expect(body.artifacts[0]?.parts[0]?.url).toBe(fileUrl);
    });

    it('the download is the whole file, streamed, as an attachment that never renders on this origin', async () => {
      expect(whole.length).toBe(size);
      const lines = csvLines(whole.toString());
      expect(lines).toHaveLength(ROWS + 1);
      expect(lines[0]).toBe(CSV_HEADER);
      expect(lines[ROWS]).toMatch(/^20000,Customer 20000,/);
      const res = await get(fileUrl);
      await res.arrayBuffer();
      expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
      expect(res.headers.get('content-length')).toBe(String(size));
      expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="export\.csv"/);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('content-security-policy')).toContain('sandbox');
      expect(res.headers.get('accept-ranges')).toBe('bytes');
    });

    it('serves byte ranges: from-to, open-ended, suffix; 416 past the end', async () => {
      // Across the boundary of two stored pieces (1 MiB).
      const from = 1024 * 1024 - 5;
      const ranged = await get(fileUrl, { Range: `bytes=${from}-${from + 9}` });
      expect(ranged.status).toBe(206);
      expect(ranged.headers.get('content-range')).toBe(`bytes ${from}-${from + 9}/${size}`);
      expect(Buffer.from(await ranged.arrayBuffer()).equals(whole.subarray(from, from + 10))).toBe(true);
      const open = await get(fileUrl, { Range: `bytes=${size - 3}-` });
      expect(Buffer.from(await open.arrayBuffer()).equals(whole.subarray(size - 3))).toBe(true);
      const suffix = await get(fileUrl, { Range: 'bytes=-100' });
      expect(Buffer.from(await suffix.arrayBuffer()).equals(whole.subarray(size - 100))).toBe(true);
      const past = await get(fileUrl, { Range: `bytes=${size}-` });
      expect(past.status).toBe(416);
      expect(past.headers.get('content-range')).toBe(`bytes */${size}`);
      const head = await fetch(fileUrl, { method: 'HEAD', headers: agent.credentials });
      expect(head.status).toBe(200);
      expect(head.headers.get('content-length')).toBe(String(size));
    });

    it("to another principal, the file, like the task, does not exist: the same 404 as a missing id's", async () => {
      const mallory = agent.as('mallory').credentials;
      const theirs = await fetch(fileUrl, { headers: mallory });
      const missing = await fetch(fileUrl.replace(taskId, `${taskId.slice(0, -4)}0000`), {
        headers: mallory,
      });
      expect(theirs.status).toBe(404);
      expect(missing.status).toBe(404);
      const [a, b] = [
        (await theirs.json()) as { title: string },
        (await missing.json()) as { title: string },
      ];
      expect(a.title).toBe(b.title);
      expect(JSON.stringify(a)).not.toContain('export');
      const anonymous = await fetch(fileUrl);
      expect(anonymous.status).toBe(401);
      const unknownArtifact = await get(`${agent.url}/v1/jobs/${taskId}/artifacts/nope`);
      expect(unknownArtifact.status).toBe(404);
    });

    it('a stream still carries each chunk as written, and the chunks add up to the download', async () => {
      const stream = await rpcStream(
        agent,
        'SubscribeToTask',
        { id: taskId },
        { version: '1.0', lastEventId: '0' },
      );
      const events = await stream.rest(15_000);
      const chunks = events
        .map((e) => e.data.result?.artifactUpdate?.artifact)
        .filter(Boolean)
        .flatMap((a) => a.parts.map((p: { raw: string }) => Buffer.from(p.raw, 'base64')));
      expect(chunks).toHaveLength(4);
      expect(Buffer.concat(chunks).equals(whole)).toBe(true);
    });

    it('a small artifact stays inline, as written', async () => {
      const { task } = await send(agent, skillMessage('export', { rows: 5 }));
      const [part] = task.artifacts[0].parts;
      expect(part.raw).toBeDefined();
      expect(part.url).toBeUndefined();
    });

    it('the /v1/jobs result downloads the same file', async () => {
      const res = await get(`${agent.url}/v1/jobs/${taskId}/result?download=1`);
      expect(res.status).toBe(200);
      expect(Buffer.from(await res.arrayBuffer()).equals(whole)).toBe(true);
    });
  },
);

describe('stored bytes per principal (MAX_STORED_BYTES) and per artifact (MAX_ARTIFACT_BYTES)', () => {
  let agent: Agent;
  beforeAll(async () => {
    agent = await launch({ apiKeys: { alice: 'acme', bob: 'acme' }, env: { MAX_STORED_BYTES: '1000000' } });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  it('an export past the quota fails before its bytes are written, saying what to do; others are unaffected', async () => {
    const { task } = await send(agent, skillMessage('export', { rows: 20_000, chunkRows: 2000 }));
    expect(task.status.state).toBe('TASK_STATE_FAILED');
    const why = task.status.message.parts[0].text;
    expect(why).toMatch(/quota of 1000000 \(MAX_STORED_BYTES\)/);
    expect(why).toMatch(/let older tasks expire/);
    const [part] = task.artifacts[0].parts;
    expect(part.metadata['taskhandle.bytes']).toBeLessThanOrEqual(1_000_000);
    // Another principal has a quota of its own.
    const bob = await send(agent.as('bob'), skillMessage('export', { rows: 5000 }));
    expect(bob.task.status.state).toBe('TASK_STATE_COMPLETED');
  });
});

describe('a client that stops reading a stream', () => {
  let agent: Agent;
  beforeAll(async () => {
    agent = await launch({ env: { MAX_ARTIFACT_BYTES: String(200 * 2 ** 20) } });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  /** The server process's resident memory, in bytes (Linux). */
  const rss = (): number => {
    const status = readFileSync(`/proc/${agent.proc.pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1]) * 1024;
  };

  it('holds the stream where it is: the server does not buffer the task in memory for it', async () => {
    // About 54 MB of CSV (72 MB as base64 in SSE events), in chunks of about 1.8 MB.
    const { task } = await send(agent, skillMessage('export', { rows: 600_000, chunkRows: 20_000 }));
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    const before = rss();
    const socket = connect(Number(new URL(agent.url).port), '127.0.0.1');
    socket.pause(); // reads nothing: the kernel's buffers fill, then the server's writes would queue
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'SubscribeToTask',
      params: { id: task.id },
    });
    socket.write(
      `POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\n` +
        `Last-Event-ID: 0\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    let peak = before;
    for (let i = 0; i < 30; i++) {
      await new Promise((r) => setTimeout(r, 100));
      peak = Math.max(peak, rss());
    }
    socket.destroy();
    expect(peak - before).toBeLessThan(40 * 2 ** 20);
    // And the server still answers.
    expect((await fetch(`${agent.url}/healthz`)).status).toBe(200);
  });
});
