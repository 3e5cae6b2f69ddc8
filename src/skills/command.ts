import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { defineSkill, type Skill, type SkillContext, type SkillOutcome } from '../engine/skill.js';

const COMMAND_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const PARAM_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
/** `{name}` inside an argv element; only names the command declares are replaced. */
const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]{0,63})\}/g;
/** A caller's value is at most this long: bounds the work an operator's pattern can be made to do. */
const MAX_VALUE_CHARS = 4096;
/** Variables a command sees from the server's environment unless it sets `inheritEnv`. */
const BASE_ENV = ['PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'TMPDIR'];

/** The value must match the whole pattern: `main` passes `[a-z]+`, `main; rm -rf /` does not. */
const fullMatch = (pattern: string) => new RegExp(`^(?:${pattern})$`, 'u');
const compiles = (pattern: string) => {
  try {
    fullMatch(pattern);
    return true;
  } catch {
    return false;
  }
};

const ParamSpec = z
  .strictObject({
    /** Regular expression (JavaScript, `u` flag) the whole value must match. */
    pattern: z.string().min(1).refine(compiles, 'must be a valid regular expression'),
    required: z.boolean().default(false),
    /** Used when the caller gives no value. */
    default: z.string().optional(),
    description: z.string().optional(),
  })
  .refine((p) => p.default === undefined || !compiles(p.pattern) || fullMatch(p.pattern).test(p.default), {
    message: 'must match the pattern',
    path: ['default'],
  });

const Spec = z
  .strictObject({
    name: z.string().regex(COMMAND_NAME, 'must be 1-64 letters, digits, ".", "_" or "-"'),
    description: z.string().optional(),
    /** The executable (run as given, no shell) and its arguments; `{param}` placeholders after argv[0]. */
    argv: z.array(z.string()).min(1, 'must name the executable'),
    params: z.record(z.string().regex(PARAM_NAME, 'must be an identifier'), ParamSpec).default({}),
    cwd: z.string().min(1).optional(),
    /** Set on top of the environment the command gets. */
    env: z.record(z.string(), z.string()).default({}),
    /** Pass the server's whole environment (default: only PATH, HOME, locale and the like). */
    inheritEnv: z.boolean().default(false),
    /** The command is stopped (SIGTERM, then SIGKILL) and the task failed after this long. */
    timeoutMs: z.number().int().positive().optional(),
  })
  .superRefine((c, ctx) => {
    if (!c.argv[0]) ctx.addIssue({ code: 'custom', path: ['argv', 0], message: 'must name the executable' });
    for (const [, name] of c.argv[0]?.matchAll(PLACEHOLDER) ?? []) {
      if (name && Object.hasOwn(c.params, name))
        ctx.addIssue({ code: 'custom', path: ['argv', 0], message: 'the executable cannot be a parameter' });
    }
  });

/** The operator's allow-list (the JSON array in `COMMANDS_FILE`): unique names, compiled patterns. */
export const CommandsFile = z.array(Spec).superRefine((list, ctx) => {
  const seen = new Set<string>();
  for (const [i, c] of list.entries()) {
    if (seen.has(c.name))
      ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `"${c.name}" is defined twice` });
    seen.add(c.name);
  }
});

/** One allow-listed command as the operator writes it. */
export type CommandSpec = z.input<typeof Spec>;
type Command = z.output<typeof Spec>;

/** Validates an allow-list; the error names the source, the entry and the field. */
function parseCommands(raw: unknown, source: string): Command[] {
  const parsed = CommandsFile.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const [index, ...field] = issue?.path ?? [];
  const entry: unknown = typeof index === 'number' && Array.isArray(raw) ? raw[index] : undefined;
  const entryName =
    typeof entry === 'object' && entry !== null ? (entry as { name?: unknown }).name : undefined;
  const name = typeof entryName === 'string' ? ` ("${entryName}")` : '';
  const where =
    typeof index === 'number' ? ` entry ${index}${name}${field.length ? `, ${field.join('.')}` : ''}` : '';
  throw new Error(`${source}:${where}: ${issue?.message ?? 'invalid'}`);
}

/**
 * Reads and validates the operator's allow-list: a JSON array of {@link CommandSpec}.
 *
 * @example
 * // commands.json: [{"name":"build","argv":["npm","run","build","--","{target}"],
 * //                  "params":{"target":{"pattern":"[a-z]+","default":"site"}}}]
 * const skill = commandSkill(loadCommands(config.COMMANDS_FILE));
 */
export function loadCommands(file: string): CommandSpec[] {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`${file}: cannot read the commands file: ${(err as Error).message}`);
  }
  return parseCommands(raw, file);
}

/** The caller's request, checked against the allow-list so a bad one is refused before a task exists. */
function inputSchema(commands: ReadonlyMap<string, Command>) {
  const names = [...commands.keys()] as [string, ...string[]];
  return z
    .strictObject({
      command: z.enum(names),
      params: z.record(z.string(), z.string().max(MAX_VALUE_CHARS)).default({}),
    })
    .superRefine((input, ctx) => {
      const spec = commands.get(input.command);
      if (!spec) return;
      const declared = Object.keys(spec.params);
      for (const [key, value] of Object.entries(input.params)) {
        const param = Object.hasOwn(spec.params, key) ? spec.params[key] : undefined;
        const path = ['params', key];
        if (!param) {
          const takes = declared.length ? `it takes: ${declared.join(', ')}` : 'it takes none';
          ctx.addIssue({ code: 'custom', path, message: `not a parameter of "${input.command}"; ${takes}` });
        } else if (value.includes('\0') || !fullMatch(param.pattern).test(value)) {
          ctx.addIssue({ code: 'custom', path, message: `must match /${param.pattern}/` });
        }
      }
      for (const key of declared) {
        if (spec.params[key]?.required && !Object.hasOwn(input.params, key))
          ctx.addIssue({ code: 'custom', path: ['params', key], message: 'is required' });
      }
    });
}

type Input = z.output<ReturnType<typeof inputSchema>>;

/**
 * The argv to spawn: placeholders replaced by validated values, never re-parsed. An element that is
 * just the placeholder of an optional parameter without a value (nor a default) is left out.
 */
function expand(spec: Command, given: Record<string, string>): string[] {
  const value = (name: string): string | undefined =>
    Object.hasOwn(given, name) ? given[name] : spec.params[name]?.default;
  const declared = (name: string) => Object.hasOwn(spec.params, name);
  const [file = '', ...args] = spec.argv;
  const out = [file];
  for (const arg of args) {
    const whole = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(arg)?.[1];
    if (whole && declared(whole) && value(whole) === undefined) continue;
    out.push(arg.replace(PLACEHOLDER, (m, name: string) => (declared(name) ? (value(name) ?? '') : m)));
  }
  return out;
}

function environment(spec: Command): NodeJS.ProcessEnv {
  if (spec.inheritEnv) return { ...process.env, ...spec.env };
  const env: NodeJS.ProcessEnv = {};
  for (const key of BASE_ENV) if (process.env[key] !== undefined) env[key] = process.env[key];
  return { ...env, ...spec.env };
}

// --- Process groups --------------------------------------------------------------------------

/** Groups started and not yet gone: killed if the agent exits without stopping them. */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  if (!Number.isInteger(pgid) || pgid <= 1) return false; // -1 would signal every process we may
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether any process of the group still runs. A zombie does not count: where PID 1 does not reap
 * orphans (some containers), a killed grandchild stays a zombie that `kill(-pgid, 0)` still finds.
 */
function groupAlive(pgid: number): boolean {
  if (!signalGroup(pgid, 0)) return false;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return true; // no procfs: trust kill(-pgid, 0)
  }
  return pids.some((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return Number(pgrp) === pgid && state !== 'Z' && state !== 'X';
    } catch {
      return false;
    }
  });
}

/** SIGTERM to the whole group, SIGKILL after `graceMs` if any of it still runs; resolves once it is gone. */
async function endGroup(pgid: number, graceMs: number): Promise<void> {
  signalGroup(pgid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (groupAlive(pgid) && Date.now() < deadline) await sleep(25);
  if (groupAlive(pgid)) {
    signalGroup(pgid, 'SIGKILL');
    const killDeadline = Date.now() + 2000;
    while (groupAlive(pgid) && Date.now() < killDeadline) await sleep(10);
  }
  liveGroups.delete(pgid);
}

function track(pgid: number): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const g of liveGroups) signalGroup(g, 'SIGKILL');
    });
  }
  liveGroups.add(pgid);
}

// --- Output ----------------------------------------------------------------------------------

const FLUSH_MS = 200;
const FLUSH_BYTES = 64 * 1024;
/** Output held while a write is in flight before the command's pipes are paused. */
const BACKLOG_BYTES = 1024 * 1024;
const TAIL_LINES = 20;
const TAIL_BYTES = 2048;

/**
 * stdout and stderr, interleaved as they come, written as one chunked `output.log` artifact: at
 * most one chunk per 200 ms or 64 KiB, so a chatty command does not write an event per line.
 */
class OutputLog {
  readonly #ctx: SkillContext<Input>;
  readonly #artifactId: string;
  readonly #progress: (bytes: number) => string;
  readonly #streams: NodeJS.ReadableStream[] = [];
  #buffer: string[] = [];
  #buffered = 0;
  #timer: NodeJS.Timeout | undefined;
  #writing: Promise<void> = Promise.resolve();
  #written = 0;
  #bytes = 0;
  #tail = '';
  /** Bytes handed to writes not yet done. */
  pending = 0;
  /** The artifact size limit was reached: the rest of the output only feeds the tail. */
  truncated = false;
  /** A write failed for another reason; the run stops the command and rethrows it. */
  error: unknown;
  onError: () => void = () => {};

  constructor(ctx: SkillContext<Input>, progress: (bytes: number) => string) {
    this.#ctx = ctx;
    this.#artifactId = `output-${ctx.taskId}`;
    this.#progress = progress;
  }

  read(stream: NodeJS.ReadableStream): void {
    stream.setEncoding('utf8');
    stream.on('data', (text: string) => this.#push(text));
    this.#streams.push(stream);
  }

  get bytes(): number {
    return this.#bytes;
  }

  /** The last lines of the output (at most 20 lines and 2 KiB), for the final status message. */
  tail(): string {
    const lines = this.#tail.replace(/\s+$/, '').split('\n').slice(-TAIL_LINES).join('\n');
    return lines.length > TAIL_BYTES ? `…${lines.slice(-TAIL_BYTES)}` : lines;
  }

  #push(text: string): void {
    const size = Buffer.byteLength(text);
    this.#bytes += size;
    this.#tail = (this.#tail + text).slice(-4 * TAIL_BYTES);
    if (this.truncated || this.error !== undefined) return;
    this.#buffer.push(text);
    this.#buffered += size;
    if (this.#buffered >= FLUSH_BYTES) void this.#flush(false);
    else this.#timer ??= setTimeout(() => void this.#flush(false), FLUSH_MS);
  }

  #flush(last: boolean): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const text = this.#buffer.join('');
    const size = this.#buffered;
    this.#buffer = [];
    this.#buffered = 0;
    this.pending += size;
    // The store is slower than the command: stop reading (the pipe then blocks the command) until it catches up.
    if (this.pending > BACKLOG_BYTES) for (const s of this.#streams) s.pause();
    this.#writing = this.#writing.then(async () => {
      await this.#write(text, last);
      this.pending -= size;
      if (this.pending <= BACKLOG_BYTES) for (const s of this.#streams) s.resume();
    });
    return this.#writing;
  }

  async #write(text: string, last: boolean): Promise<void> {
    if (this.error !== undefined) return;
    const chunk = this.truncated ? '' : text;
    if (!chunk && !last) return;
    const write = (t: string) =>
      this.#ctx.artifact({
        artifactId: this.#artifactId,
        name: 'output.log',
        description: 'stdout and stderr of the command',
        parts: [{ text: t }],
        append: this.#written > 0, // a re-run's first chunk replaces what an earlier run wrote
        lastChunk: last,
      });
    try {
      try {
        await write(chunk);
      } catch (err) {
        if (!(err instanceof RangeError)) throw err;
        this.truncated = true;
        if (!last) return;
        await write(''); // adds nothing, so it fits: the artifact still gets its last chunk
      }
      this.#written++;
      if (!last) await this.#ctx.progress({ message: this.#progress(this.#bytes) });
    } catch (err) {
      this.error = err;
      this.onError();
    }
  }

  /** Writes what is left as the last chunk. */
  close(): Promise<void> {
    return this.#flush(true);
  }

  /** Drops what is left (the run was aborted: the task accepts no more writes). */
  dispose(): void {
    clearTimeout(this.#timer);
    this.#buffer = [];
  }
}

// --- The skill -------------------------------------------------------------------------------

type Ended = { code: number | null; signal: NodeJS.Signals | null } | { error: NodeJS.ErrnoException };

function startFailure(name: string, spec: Command, err: NodeJS.ErrnoException): string {
  const file = spec.argv[0];
  if (err.code === 'ENOENT')
    return `${name} could not start: "${file}" was not found${spec.cwd ? ` (or the directory "${spec.cwd}" does not exist)` : ''}`;
  if (err.code === 'EACCES') return `${name} could not start: "${file}" is not executable (EACCES)`;
  return `${name} could not start: ${err.message}`;
}

async function runCommand(
  ctx: SkillContext<Input>,
  spec: Command,
  killGraceMs: number,
): Promise<SkillOutcome> {
  const { name } = spec;
  ctx.signal.throwIfAborted();
  const [file = '', ...args] = expand(spec, ctx.input.params);
  let child: ChildProcess;
  try {
    child = spawn(file, args, {
      cwd: spec.cwd,
      env: environment(spec),
      detached: true, // its own process group, so that a stop reaches its children too
      stdio: ['ignore', 'pipe', 'pipe'],
      shell: false,
    });
  } catch (err) {
    return { state: 'failed', message: startFailure(name, spec, err as NodeJS.ErrnoException) };
  }
  const ended = new Promise<Ended>((resolve) => {
    child.once('error', (error) => resolve({ error }));
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const pgid = child.pid;
  if (pgid !== undefined) track(pgid);
  const out = new OutputLog(ctx, (bytes) => `running (pid ${pgid}), ${bytes} bytes of output`);
  const closed = Promise.all(
    [child.stdout, child.stderr].map((s) => (s ? new Promise((r) => s.once('close', r)) : undefined)),
  );
  if (child.stdout) out.read(child.stdout);
  if (child.stderr) out.read(child.stderr);

  let ending: Promise<void> | undefined;
  const end = () => {
    if (pgid !== undefined) ending ??= endGroup(pgid, killGraceMs);
    return ending;
  };
  let timedOut = false;
  const onAbort = () => void end();
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  out.onError = onAbort;
  const timer =
    spec.timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          void end();
        }, spec.timeoutMs);
  try {
    if (pgid !== undefined && !ctx.signal.aborted)
      await ctx.progress({ message: `running (pid ${pgid}), 0 bytes of output` }).catch(() => {});
    if (ctx.signal.aborted) onAbort();
    const result = await ended;
    // The command is done; nothing it started may outlive the task.
    await end();
    // A process that left the group may still hold the pipes: stop waiting once the output stalls.
    let isClosed = false;
    void closed.then(() => {
      isClosed = true;
    });
    for (let seen = -1; !isClosed && (out.bytes !== seen || out.pending > 0); ) {
      seen = out.bytes;
      await Promise.race([closed, sleep(1000)]);
    }
    child.stdout?.destroy();
    child.stderr?.destroy();
    if (ctx.signal.aborted) {
      out.dispose();
      throw ctx.signal.reason;
    }
    await out.close();
    if (out.error !== undefined) throw out.error;
    const tail = out.tail();
    const withTail = (s: string) =>
      `${s}${out.truncated ? ' (output truncated: artifact size limit)' : ''}${tail ? `:\n${tail}` : ''}`;
    if ('error' in result) return { state: 'failed', message: startFailure(name, spec, result.error) };
    if (timedOut)
      return { state: 'failed', message: withTail(`${name} timed out after ${spec.timeoutMs} ms`) };
    if (result.code === 0) return { message: `${name} exited 0` };
    if (result.code !== null)
      return { state: 'failed', message: withTail(`${name} exited with code ${result.code}`) };
    return { state: 'failed', message: withTail(`${name} was killed by ${result.signal ?? 'a signal'}`) };
  } finally {
    clearTimeout(timer);
    ctx.signal.removeEventListener('abort', onAbort);
    out.dispose();
  }
}

/** Builds `{"command": "build", "params": {"target": "site"}}` from text like `build target=site`. */
function inputFromText(text: string, names: ReadonlySet<string>): unknown {
  const words = text.trim().split(/\s+/);
  const command = words.find((w) => names.has(w));
  if (!command) return {};
  const params = Object.fromEntries(
    words.flatMap((w) => {
      const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(w);
      return m?.[1] && m[2] !== undefined ? [[m[1], m[2]]] : [];
    }),
  );
  return { command, params };
}

/**
 * The `command` skill: runs one of the operator's allow-listed commands (no shell; caller values only
 * fill declared `{param}` placeholders after matching their pattern), streams stdout and stderr as
 * the `output.log` artifact, and stops the command's whole process group on cancel or timeout.
 *
 * @example
 * commandSkill([{ name: 'greet', argv: ['echo', 'hello', '{who}'], params: { who: { pattern: '[a-z]+' } } }])
 */
export function commandSkill(
  commands: readonly CommandSpec[],
  opts: { killGraceMs?: number } = {},
): Skill<Input> {
  const list = parseCommands(commands, 'commands');
  if (list.length === 0) throw new Error('commands: the allow-list is empty');
  const byName = new Map(list.map((c) => [c.name, c]));
  const killGraceMs = opts.killGraceMs ?? 5000;
  const listed = list
    .map((c) => {
      const params = Object.keys(c.params);
      const about = [c.description, params.length ? `params: ${params.join(', ')}` : ''].filter(Boolean);
      return about.length ? `${c.name} (${about.join('; ')})` : c.name;
    })
    .join(', ');
  const first = list[0] as Command;
  return defineSkill<Input>({
    id: 'command',
    name: 'Run a command',
    description: `Runs one of the operator's allow-listed commands (no shell) and streams its stdout and stderr as the output.log artifact: ${listed}.`,
    tags: ['command', 'build', 'script'],
    examples: [first.name, JSON.stringify({ skill: 'command', input: { command: first.name } })],
    input: inputSchema(byName),
    inputFromMessage: (m) =>
      inputFromText(m.parts.map((p) => p.text ?? '').join(' '), new Set(byName.keys())),
    pollIntervalMs: 1000,
    ttlMs: 7 * 86_400_000,
    onInterrupt: 'fail', // a command cut off by a crash must not silently run twice
    run: (ctx) => runCommand(ctx, byName.get(ctx.input.command) as Command, killGraceMs),
  });
}
