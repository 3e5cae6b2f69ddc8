import { randomUUID } from 'node:crypto';
import { createWriteStream, readFileSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { describeChecks, verifyCardAt } from './card-verify.js';
import type { A2AClient, Json } from './client.js';
import { CliError, EXIT } from './exit-codes.js';
import { follow } from './follow.js';
import {
  describeTask,
  handleOf,
  messageText,
  progressBar,
  progressText,
  resultPieces,
  taskLine,
} from './render.js';
import { exitCodeOf, isSettled, shortState } from './states.js';

/** What a command reads besides the client: its positionals and parsed options. */
export interface CommandInput {
  client: A2AClient;
  args: string[];
  // biome-ignore lint/suspicious/noExplicitAny: parseArgs values, checked per command
  values: Record<string, any>;
  out: NodeJS.WriteStream;
  err: NodeJS.WriteStream;
}

const println = (stream: NodeJS.WriteStream, text: string) => stream.write(`${text}\n`);

function taskId(args: string[], command: string): string {
  const id = args[0];
  if (!id || args.length > 1) throw new CliError(EXIT.usage, `${command}: give exactly one task id`);
  return id;
}

function parseInput(raw: string | undefined): Json {
  if (raw === undefined) return {};
  let text = raw;
  if (raw.startsWith('@')) {
    try {
      text = readFileSync(raw.slice(1), 'utf8');
    } catch (err) {
      throw new CliError(EXIT.usage, `--input ${raw}: ${(err as Error).message}`);
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new CliError(EXIT.usage, `--input: not JSON: ${(err as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new CliError(EXIT.usage, '--input: must be a JSON object');
  return value as Json;
}

/**
 * Polls GetTask (at the task's pollIntervalMs, 250 ms to 2 s) until it is terminal or waits for
 * input. An agent that cannot be reached (a restart) is polled on for up to a minute.
 */
async function waitFor(client: A2AClient, id: string, task: Json): Promise<Json> {
  let current = task;
  let failingSince: number | undefined;
  while (!isSettled(String(current.status?.state))) {
    const hint = Number(handleOf(current).pollIntervalMs);
    const delay = Number.isFinite(hint) ? Math.min(Math.max(hint, 250), 2_000) : 1_000;
    await new Promise((r) => setTimeout(r, delay));
    try {
      current = await client.call('GetTask', { id, historyLength: 0 });
      failingSince = undefined;
    } catch (e) {
      if (!(e instanceof CliError) || e.exitCode !== EXIT.connection) throw e;
      failingSince ??= Date.now();
      if (Date.now() - failingSince > 60_000) throw e;
    }
  }
  return current;
}

export async function submit({ client, args, values, out, err }: CommandInput): Promise<number> {
  const skill = args[0];
  if (args.length > 1) throw new CliError(EXIT.usage, 'submit: give one skill (options go after it)');
  if (!skill && values.text === undefined) throw new CliError(EXIT.usage, 'submit: give a skill, or --text');
  const parts: Json[] = [];
  if (values.text !== undefined) parts.push({ text: String(values.text) });
  if (skill) parts.push({ data: { skill, input: parseInput(values.input) } });
  else if (values.input !== undefined) throw new CliError(EXIT.usage, 'submit: --input needs a skill');
  const message = { messageId: values['message-id'] ?? randomUUID(), role: 'ROLE_USER', parts };
  const result = await client.call('SendMessage', { message, configuration: { returnImmediately: true } });
  if (!result.task) {
    // The agent answered with a message and made no task: nothing to follow.
    println(out, values.json ? JSON.stringify(result) : messageText(result.message));
    return EXIT.ok;
  }
  let task = result.task as Json;
  if (!values.json) println(out, String(task.id));
  if (!values.wait) {
    if (values.json) println(out, JSON.stringify(task));
    return EXIT.ok;
  }
  task = await waitFor(client, String(task.id), task);
  const state = String(task.status?.state);
  if (values.json) println(out, JSON.stringify(task));
  const code = exitCodeOf(state);
  if (code !== EXIT.ok) {
    const why = messageText(task.status?.message);
    println(err, `task ${task.id} is ${shortState(state)}${why ? `: ${why}` : ''}`);
  }
  return code;
}

export async function get({ client, args, values, out }: CommandInput): Promise<number> {
  const id = taskId(args, 'get');
  const task = await client.call('GetTask', { id, historyLength: values.json ? undefined : 0 });
  println(out, values.json ? JSON.stringify(task) : describeTask(task));
  return EXIT.ok;
}

export async function cancel({ client, args, values, out }: CommandInput): Promise<number> {
  const id = taskId(args, 'cancel');
  const task = await client.call('CancelTask', { id });
  println(out, values.json ? JSON.stringify(task) : `${id} ${shortState(String(task.status?.state))}`);
  return EXIT.ok;
}

/** `working` or `input-required` -> `TASK_STATE_INPUT_REQUIRED`; a full name passes. */
const fullState = (s: string): string =>
  s.startsWith('TASK_STATE_') ? s : `TASK_STATE_${s.toUpperCase().replaceAll('-', '_')}`;

export async function list({ client, args, values, out, err }: CommandInput): Promise<number> {
  if (args.length > 0) throw new CliError(EXIT.usage, 'list: takes no arguments');
  const pageSize = values['page-size'] === undefined ? 20 : Number(values['page-size']);
  if (!Number.isInteger(pageSize) || pageSize < 1)
    throw new CliError(EXIT.usage, '--page-size: a whole number, 1 or more');
  const params: Json = { pageSize, historyLength: 0 };
  if (values.state) params.status = fullState(String(values.state));
  if (values['page-token']) params.pageToken = values['page-token'];
  const result = await client.call('ListTasks', params);
  if (values.json) {
    println(out, JSON.stringify(result));
    return EXIT.ok;
  }
  for (const task of (result.tasks ?? []) as Json[]) println(out, taskLine(task));
  if (result.nextPageToken) println(err, `next page: ${result.nextPageToken}`);
  return EXIT.ok;
}

export async function result({ client, args, values, out, err }: CommandInput): Promise<number> {
  const id = taskId(args, 'result');
  const task = await client.call('GetTask', { id, historyLength: 0 });
  const state = String(task.status?.state);
  if (state !== 'TASK_STATE_COMPLETED') {
    const why = messageText(task.status?.message);
    println(err, `task ${id} is ${shortState(state)}${why ? `: ${why}` : ''}; no result`);
    return exitCodeOf(state);
  }
  const artifacts = (task.artifacts ?? []) as Json[];
  const pieces = values.json ? [Buffer.from(`${JSON.stringify(artifacts)}\n`)] : resultPieces(artifacts);
  const sink = values.output ? createWriteStream(String(values.output)) : out;
  for (const piece of pieces) {
    // A large file streams from the agent to the sink: never held whole in memory.
    if (Buffer.isBuffer(piece)) await write(sink, piece);
    else await pipeline(await client.download(piece.download), sink, { end: false });
  }
  if (sink !== out)
    await new Promise<void>((resolve, reject) => sink.end(() => resolve()).once('error', reject));
  return EXIT.ok;
}

export async function watch({ client, args, values, out, err }: CommandInput): Promise<number> {
  const id = taskId(args, 'watch');
  const retryFor = values['retry-for'] === undefined ? 60 : Number(values['retry-for']);
  if (!Number.isFinite(retryFor) || retryFor < 0)
    throw new CliError(EXIT.usage, '--retry-for: seconds, 0 or more');
  const live = Boolean(out.isTTY) && !values.json;
  let percent: number | undefined;
  let text = '';
  let state = 'TASK_STATE_SUBMITTED';
  const draw = (note?: string) =>
    out.write(`\r${progressBar(percent, note ?? text, state, out.columns || 80)}`);
  let lastEventId: string | undefined = values['last-event-id'];
  // Ctrl-C stops the watching, never the task: end the bar's line and say how to come back.
  const stop = new AbortController();
  const interrupt = () => stop.abort();
  process.once('SIGINT', interrupt);
  let final: string;
  try {
    final = await follow(client, id, {
      retryForMs: retryFor * 1000,
      lastEventId,
      signal: stop.signal,
      onEvent: ({ id: eventId, result: r }) => {
        if (eventId !== undefined) lastEventId = eventId;
        const source = (r.task ?? r.statusUpdate) as Json | undefined;
        if (source?.status?.state) state = String(source.status.state);
        if (!live) {
          println(out, JSON.stringify(r));
          return;
        }
        if (!source) return;
        const progress = handleOf(source).progress as Json | undefined;
        if (progress) {
          if (typeof progress.percent === 'number') percent = progress.percent;
          text = progressText({ message: progress.message });
        }
        const said = messageText(source.status?.message);
        if (said) text = said;
        if (state === 'TASK_STATE_COMPLETED') percent = 100;
        draw();
      },
      onRetry: (delayMs, lastSeen, reason) => {
        if (live) draw(`reconnecting in ${delayMs} ms`);
        else
          println(
            err,
            `taskhandle: ${reason}; reconnecting in ${delayMs} ms (Last-Event-ID: ${lastSeen ?? 'none'})`,
          );
      },
    });
  } catch (e) {
    if (!stop.signal.aborted) throw e;
    if (live) out.write('\n');
    // Piped, the events so far are printed: re-attaching after the last one misses none, repeats none.
    const resume = !live && lastEventId !== undefined ? ` --last-event-id ${lastEventId}` : '';
    const url = values.url === undefined ? '' : ` --url ${values.url}`;
    println(
      err,
      `taskhandle watch: stopped watching; task ${id} goes on (${shortState(state)} when last seen). ` +
        `Re-attach with: taskhandle watch ${id}${resume}${url}`,
    );
    return EXIT.interrupted;
  } finally {
    process.removeListener('SIGINT', interrupt);
  }
  if (live) out.write('\n');
  const code = exitCodeOf(final);
  if (code !== EXIT.ok) println(err, `task ${id} is ${shortState(final)}`);
  return code;
}

/** Writes a piece, waiting for the sink to take it. */
function write(sink: NodeJS.WritableStream, piece: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    sink.write(piece, (err) => (err ? reject(err) : resolve()));
  });
}

/** `card verify URL`: checks the agent card's signatures (card-verify.ts); exit 9 when none verifies. */
export async function card({ args, values, out }: CommandInput): Promise<number> {
  const [sub, url, ...extra] = args;
  if (sub !== 'verify')
    throw new CliError(
      EXIT.usage,
      sub === undefined
        ? 'give a subcommand: taskhandle card verify URL'
        : `unknown subcommand "${sub}"; the only one is "verify"`,
    );
  if (!url || extra.length > 0)
    throw new CliError(EXIT.usage, 'card verify: give exactly one URL (the card, or the agent)');
  const result = await verifyCardAt({ url, version: values['a2a-version'] ?? '1.0', jwks: values.jwks });
  if (values.json) println(out, JSON.stringify(result));
  else for (const line of describeChecks(result)) println(out, line);
  return result.verified ? EXIT.ok : EXIT.unverified;
}
