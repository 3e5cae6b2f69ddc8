import { z } from 'zod';

const positiveMs = z.number().int('must be a whole number of milliseconds').positive('must be more than 0');

/**
 * What a skill must hold to be served, checked where skills come from outside the code base (skill
 * modules, createServer's `skills`), as TypeScript checks defineSkill: a JavaScript author, or a
 * module built against another version, is told which field is wrong before the server starts.
 */
const Definition = z
  .looseObject({
    id: z
      .string()
      .regex(
        /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/,
        'must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit (it names an MCP tool and a URL segment)',
      ),
    description: z.string().min(1, 'must say what the skill does (callers and models read it)'),
    input: z.custom<object>(
      (v) => typeof v === 'object' && v !== null,
      'must be a zod schema or a JSON Schema object',
    ),
    pollIntervalMs: positiveMs,
    ttlMs: positiveMs,
    onInterrupt: z.enum(['rerun', 'fail'], 'must be "rerun" or "fail"'),
    run: z
      .custom<(ctx: unknown) => unknown>(
        (v) => typeof v === 'function',
        'must be a function (async (ctx) => ...)',
      )
      .optional(),
    remote: z.literal(true, 'must be true (defineRemoteSkill sets it) or absent').optional(),
    concurrency: z.number().int().positive().optional(),
    retry: z.looseObject({ attempts: z.number().int().min(1) }).optional(),
  })
  .check((ctx) => {
    // A skill runs here (run) or on workers (remote), never both, never neither.
    const { run, remote } = ctx.value;
    if ((run === undefined) === (remote === undefined)) {
      ctx.issues.push({
        code: 'custom',
        input: ctx.value,
        path: ['run'],
        message:
          remote === undefined
            ? 'must be a function (async (ctx) => ...), or declare the skill with defineRemoteSkill for workers'
            : 'must be absent from a remote skill (its work runs on workers, docs/workers.md)',
      });
    }
  });

/**
 * Whether `value` is meant as a skill: an object with an `id` and a `run`, as defineSkill makes, or
 * marked `remote`, as defineRemoteSkill makes.
 */
export const looksLikeSkill = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && 'id' in value && ('run' in value || 'remote' in value);

/** What is wrong with a skill definition, in words naming the field; undefined when it is a skill. */
export function skillProblem(value: unknown): string | undefined {
  const parsed = Definition.safeParse(value);
  if (parsed.success) return undefined;
  const issue = parsed.error.issues[0];
  return `${issue?.path.join('.') || 'the skill'} ${issue?.message ?? 'is not valid'}`;
}
