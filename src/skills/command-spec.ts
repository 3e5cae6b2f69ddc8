import { readFileSync } from 'node:fs';
import { z } from 'zod';

// The operator's allow-list of commands, and a caller's request checked against it.

const COMMAND_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const PARAM_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
/** `{name}` inside an argv element; only names the command declares are replaced. */
const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]{0,63})\}/g;
/** A caller's value is at most this long: bounds the work an operator's pattern can be made to do. */
const MAX_VALUE_CHARS = 4096;
/** Variables a command sees from the server's environment unless it sets `inheritEnv`. */
const BASE_ENV = ['PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'TMPDIR'];

/** The value must match the whole pattern: `main` passes `[a-z]+`, `main; rm -rf /` does not. */
export const fullMatch = (pattern: string) => new RegExp(`^(?:${pattern})$`, 'u');
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
export type Command = z.output<typeof Spec>;

/** Validates an allow-list; the error names the source, the entry and the field. */
export function parseCommands(raw: unknown, source: string): Command[] {
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
export function inputSchema(commands: ReadonlyMap<string, Command>) {
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

export type Input = z.output<ReturnType<typeof inputSchema>>;

/**
 * The argv to spawn: placeholders replaced by validated values, never re-parsed. An element that is
 * just the placeholder of an optional parameter without a value (nor a default) is left out.
 */
export function expand(spec: Command, given: Record<string, string>): string[] {
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

export function environment(spec: Command): NodeJS.ProcessEnv {
  if (spec.inheritEnv) return { ...process.env, ...spec.env };
  const env: NodeJS.ProcessEnv = {};
  for (const key of BASE_ENV) if (process.env[key] !== undefined) env[key] = process.env[key];
  return { ...env, ...spec.env };
}
