import { randomUUID } from 'node:crypto';
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { createParser } from 'eventsource-parser';
import { type BuildUp, FLOOD_JOB_S, type Outcomes, REFUSED, type Retried } from './flood-bounds.js';
import { RPC_HEADERS, sendBody, subscribeBody } from './rpc.js';

/**
 * The flooding tenant of the flood scenario (scenarios/flood.ts), in a process of its own so that its
 * requests, streams and webhook deliveries do not delay the quiet tenant's timed requests in the
 * bench process. With one API key (FLOODER_AUTH: its Authorization header, kept off the command
 * line) it takes every bound the server sets one principal, all of them together:
 *
 * 1. `sleep` jobs of FLOOD_JOB_S, `--in-flight` creates at a time, until MAX_ACTIVE_TASKS refuses
 *    one (-32053);
 * 2. on the first `--push-tasks` of them, webhooks that hear every event (the running jobs' progress),
 *    at a receiver of its own (127.0.0.1, answers 200), until
 *    MAX_PUSH_CONFIGS refuses one on each task (-32004);
 * 3. SubscribeToTask streams on its first tasks (the ones that run first), until MAX_STREAMS
 *    refuses one (-32054);
 *
 * then sends `{ ready: BuildUp }` (IPC) and keeps asking for more of each, `--retry-in-flight`
 * requests at a time per kind (0: it only holds what it has), each sent as soon as the last is
 * answered, until the bench sends `stop`: then `{ done: Retried }`, and it exits.
 */

const FLOOD_JOB = { data: { skill: 'sleep', input: { seconds: FLOOD_JOB_S } } };

/** RUNNER_CONCURRENCY's default: the tasks that run first, and so send events, hold the streams. */
const STREAM_TASKS = 16;

const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    'push-tasks': { type: 'string', default: '1000' },
    'in-flight': { type: 'string', default: '32' },
    'retry-in-flight': { type: 'string', default: '1' },
  },
});
const auth = process.env.FLOODER_AUTH;
if (!values.url || !auth || !process.send)
  throw new Error(
    'usage (forked, with IPC): FLOODER_AUTH="Bearer th_…" flooder.js --url http://127.0.0.1:PORT',
  );
const url = values.url;
const headers = { ...RPC_HEADERS, Authorization: auth };
const send = process.send.bind(process);

// Streams hold their sockets; everything else reuses them.
const agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
let webhookPosts = 0;
let streamEvents = 0;
const openStreams: { destroy(): void }[] = [];

/** What an answer was (`accepted`, a JSON-RPC error code, `HTTP <status>`, `error <code>`), and a create's task. */
interface Answer {
  outcome: string;
  result?: { task?: { id?: string } };
}

/** One JSON-RPC call; resolves with its outcome (never rejects: a refusal is what is counted). */
function post(body: string): Promise<Answer> {
  return new Promise((resolve) => {
    const req = request(url, { method: 'POST', agent, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        text += d;
      });
      res.on('end', () => resolve(outcomeOf(res.statusCode ?? 0, text)));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ outcome: `error ${err.code}` }));
    req.end(body);
  });
}

function outcomeOf(status: number, text: string): Answer {
  try {
    const reply = JSON.parse(text) as { result?: Answer['result']; error?: { code: number } };
    if (reply.error) return { outcome: String(reply.error.code) };
    if (status === 200) return { outcome: 'accepted', ...(reply.result ? { result: reply.result } : {}) };
  } catch {
    // not JSON: judged by its status
  }
  return { outcome: `HTTP ${status}` };
}

/** SubscribeToTask: a stream the server opens is held (its events counted) until the process ends. */
function openStream(taskId: string): Promise<Answer> {
  return new Promise((resolve) => {
    const req = request(url, { method: 'POST', agent, headers }, (res) => {
      res.setEncoding('utf8');
      if (!String(res.headers['content-type']).startsWith('text/event-stream')) {
        let text = '';
        res.on('data', (d: string) => {
          text += d;
        });
        res.on('end', () => resolve(outcomeOf(res.statusCode ?? 0, text)));
        return;
      }
      const parser = createParser({
        onEvent: () => {
          streamEvents++;
        },
      });
      res.on('data', (chunk: string) => parser.feed(chunk));
      // the server ends streams when it stops; nothing to count then
      res.on('error', () => {});
      openStreams.push(req);
      resolve({ outcome: 'accepted' });
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ outcome: `error ${err.code}` }));
    req.end(subscribeBody(taskId));
  });
}

let configIds = 0;
const pushConfigBody = (taskId: string, hook: string): string =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: randomUUID(),
    method: 'CreateTaskPushNotificationConfig',
    params: { taskId, id: `hook-${++configIds}`, url: hook },
  });

/** A webhook receiver on 127.0.0.1: counts each POST, answers 200. */
async function startReceiver(): Promise<string> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      webhookPosts++;
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  // the fragment asks for every event, not only the ones a caller must act on (push-config-wire.ts)
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook#taskhandle-events=all`;
}

const unexpected = (what: string, outcome: string): Error =>
  new Error(`${what}: expected acceptance or its bound's refusal, got ${outcome}`);

let connectionErrors = 0;
/**
 * Sends again, a few times, what a connection error cut off (seen, rarely, on a loaded machine):
 * the same body, so that a create the server did make is answered as the same task (its messageId).
 */
async function persist(ask: () => Promise<Answer>): Promise<Answer> {
  for (let attempt = 1; ; attempt++) {
    const answer = await ask();
    if (!answer.outcome.startsWith('error ') || attempt === 5) return answer;
    connectionErrors++;
  }
}

async function buildUp(hook: string): Promise<{ ids: string[]; pushIds: string[]; built: BuildUp }> {
  const started = performance.now();
  const ids: string[] = [];
  const create = sendBody(FLOOD_JOB);
  let full = false;
  const creator = async () => {
    while (!full) {
      const body = create();
      const { outcome, result } = await persist(() => post(body));
      if (outcome === REFUSED.tasks) full = true;
      else if (outcome === 'accepted' && result?.task?.id) ids.push(result.task.id);
      else throw unexpected('SendMessage', outcome);
    }
  };
  await Promise.all(Array.from({ length: Number(values['in-flight']) }, creator));

  const pushIds = ids.slice(0, Number(values['push-tasks']));
  let pushConfigs = 0;
  let next = 0;
  const configurer = async () => {
    while (next < pushIds.length) {
      const taskId = pushIds[next++] as string;
      for (;;) {
        const body = pushConfigBody(taskId, hook);
        const { outcome } = await persist(() => post(body));
        if (outcome === REFUSED.pushConfigs) break;
        if (outcome !== 'accepted') throw unexpected('CreateTaskPushNotificationConfig', outcome);
        pushConfigs++;
      }
    }
  };
  await Promise.all(Array.from({ length: Number(values['in-flight']) }, configurer));

  let streams = 0;
  for (;;) {
    const { outcome } = await persist(() => openStream(ids[streams % STREAM_TASKS] as string));
    if (outcome === REFUSED.streams) break;
    if (outcome !== 'accepted') throw unexpected('SubscribeToTask', outcome);
    streams++;
  }
  const seconds = (performance.now() - started) / 1000;
  return {
    ids,
    pushIds,
    built: { tasks: ids.length, pushTasks: pushIds.length, pushConfigs, streams, connectionErrors, seconds },
  };
}

/**
 * Asks for more of each bound, `--retry-in-flight` requests at a time per kind (0: none, the bounds
 * only held), until the bench says stop; counts what each answer was.
 */
async function retry(ids: string[], pushIds: string[], hook: string): Promise<Retried> {
  let stop = false;
  const stopped = new Promise<void>((resolve) =>
    process.once('message', () => {
      stop = true;
      resolve();
    }),
  );
  webhookPosts = 0;
  streamEvents = 0;
  const started = performance.now();
  const tally = (into: Outcomes, outcome: string) => {
    into[outcome] = (into[outcome] ?? 0) + 1;
  };
  const creates: Outcomes = {};
  const streams: Outcomes = {};
  const pushConfigs: Outcomes = {};
  const create = sendBody(FLOOD_JOB);
  let streamAt = 0;
  let pushAt = 0;
  const loops = [
    async () => {
      while (!stop) tally(creates, (await post(create())).outcome);
    },
    async () => {
      while (!stop) tally(streams, (await openStream(ids[streamAt++ % STREAM_TASKS] as string)).outcome);
    },
    async () => {
      while (!stop)
        tally(
          pushConfigs,
          (await post(pushConfigBody(pushIds[pushAt++ % pushIds.length] as string, hook))).outcome,
        );
    },
  ];
  const inFlight = Number(values['retry-in-flight']);
  await Promise.all([stopped, ...loops.flatMap((loop) => Array.from({ length: inFlight }, loop))]);
  const seconds = (performance.now() - started) / 1000;
  return { seconds, creates, streams, pushConfigs, webhookPosts, streamEvents };
}

async function main(): Promise<void> {
  // the bench gone (stopped, crashed), nothing would ever stop the retries
  process.once('disconnect', () => process.exit(1));
  const hook = await startReceiver();
  const { ids, pushIds, built } = await buildUp(hook);
  const retried = retry(ids, pushIds, hook);
  send({ ready: built });
  const done = await retried;
  for (const s of openStreams) s.destroy();
  send({ done }, () => process.exit(0));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
