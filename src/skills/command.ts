import { type ChildProcess, spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { defineSkill, type Skill, type SkillContext, type SkillOutcome } from '../engine/skill.js';
import { OutputLog } from './command-output.js';
import {
  type Command,
  type CommandSpec,
  environment,
  expand,
  type Input,
  inputSchema,
  parseCommands,
} from './command-spec.js';
import { endGroup, track } from './process-group.js';

export { type CommandSpec, CommandsFile, loadCommands } from './command-spec.js';

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
    if (result.code === 0) {
      // The last report said "running (pid ...)": a completed task's progress says how it ended.
      await ctx.progress({ message: `exited 0, ${out.bytes} bytes of output` }).catch(() => {});
      return { message: `${name} exited 0` };
    }
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
  opts: { killGraceMs?: number; concurrency?: number } = {},
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
    inputFromText: (text) => inputFromText(text, new Set(byName.keys())),
    pollIntervalMs: 1000,
    ttlMs: 7 * 86_400_000,
    onInterrupt: 'fail', // a command cut off by a crash must not silently run twice
    concurrency: opts.concurrency,
    run: (ctx) => runCommand(ctx, byName.get(ctx.input.command) as Command, killGraceMs),
  });
}
