import { parseArgs } from 'node:util';
import { A2AClient } from './client.js';
import * as commands from './commands.js';
import { CliError, EXIT } from './exit-codes.js';
import { COMMAND_HELP, OVERVIEW } from './help.js';

type Options = NonNullable<Parameters<typeof parseArgs>[0]>['options'];

const COMMON: Options = {
  url: { type: 'string' },
  token: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
};

const OPTIONS: Record<keyof typeof COMMANDS, Options> = {
  submit: {
    input: { type: 'string' },
    text: { type: 'string' },
    'message-id': { type: 'string' },
    wait: { type: 'boolean' },
  },
  get: {},
  cancel: {},
  list: { state: { type: 'string' }, 'page-size': { type: 'string' }, 'page-token': { type: 'string' } },
  result: { output: { type: 'string', short: 'o' } },
  watch: { 'retry-for': { type: 'string' }, 'last-event-id': { type: 'string' } },
};

const COMMANDS = {
  submit: commands.submit,
  get: commands.get,
  cancel: commands.cancel,
  list: commands.list,
  result: commands.result,
  watch: commands.watch,
};

/** The client commands main.ts hands over (`help` included). */
export const isClientCommand = (name: string | undefined): boolean =>
  name === 'help' || (name !== undefined && Object.hasOwn(COMMANDS, name));

export const DEFAULT_URL = 'http://127.0.0.1:41241';

/**
 * Runs a client command (`argv` without node and the script) and returns its exit code.
 *
 * @example
 *   process.exitCode = await runClient(['get', taskId, '--json']);
 */
export async function runClient(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [name, ...rest] = argv;
  const out = process.stdout;
  const err = process.stderr;
  if (name === 'help') {
    const topic = rest[0];
    const text = topic && Object.hasOwn(COMMAND_HELP, topic) ? COMMAND_HELP[topic] : OVERVIEW;
    out.write(`${text}\n`);
    return EXIT.ok;
  }
  const command = name as keyof typeof COMMANDS;
  try {
    let parsed: ReturnType<typeof parseArgs>;
    try {
      parsed = parseArgs({ args: rest, allowPositionals: true, options: { ...COMMON, ...OPTIONS[command] } });
    } catch (e) {
      throw new CliError(EXIT.usage, `${(e as Error).message}\n\n${COMMAND_HELP[command]}`);
    }
    if (parsed.values.help) {
      out.write(`${COMMAND_HELP[command]}\n`);
      return EXIT.ok;
    }
    const url = String(parsed.values.url ?? env.TASKHANDLE_URL ?? DEFAULT_URL);
    try {
      new URL(url);
    } catch {
      throw new CliError(EXIT.usage, `--url: not a URL: ${url}`);
    }
    const token = (parsed.values.token as string | undefined) ?? (env.TASKHANDLE_TOKEN || undefined);
    const client = new A2AClient({ url, token });
    return await COMMANDS[command]({ client, args: parsed.positionals, values: parsed.values, out, err });
  } catch (e) {
    if (!(e instanceof CliError)) throw e;
    err.write(`taskhandle ${name}: ${e.message}\n`);
    return e.exitCode;
  }
}
