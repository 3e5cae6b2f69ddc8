import { didYouMean } from '../words/did-you-mean.js';
import { type Options, parseCommandLine } from './args.js';
import { A2AClient } from './client.js';
import * as commands from './commands.js';
import { CliError, EXIT } from './exit-codes.js';
import { COMMAND_HELP, OVERVIEW } from './help.js';
import { SERVER_COMMANDS } from './server-args.js';

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
  card: { 'a2a-version': { type: 'string' }, jwks: { type: 'string' } },
};

const COMMANDS = {
  submit: commands.submit,
  get: commands.get,
  cancel: commands.cancel,
  list: commands.list,
  result: commands.result,
  watch: commands.watch,
  card: commands.card,
};

/** The commands main.ts runs itself (the server's); every other command line is runClient's. */
export const isServerCommand = (name: string | undefined): boolean =>
  (SERVER_COMMANDS as readonly string[]).includes(name ?? '');

const EVERY_COMMAND = [...SERVER_COMMANDS, 'help', ...Object.keys(COMMANDS)];

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
  if (name === undefined) {
    // A bare `taskhandle` is a question, not an order to start a server here: the overview, exit 2.
    err.write(`${OVERVIEW}\n\ntaskhandle: give a command (taskhandle serve runs the agent)\n`);
    return EXIT.usage;
  }
  if (name === 'help' || name === '--help' || name === '-h') {
    const topic = rest[0];
    if (topic !== undefined && !Object.hasOwn(COMMAND_HELP, topic)) {
      err.write(`taskhandle help: no command "${topic}"${didYouMean(topic, Object.keys(COMMAND_HELP))}\n`);
      return EXIT.usage;
    }
    out.write(`${topic === undefined ? OVERVIEW : COMMAND_HELP[topic]}\n`);
    return EXIT.ok;
  }
  if (!Object.hasOwn(COMMANDS, name)) {
    err.write(
      name.startsWith('-')
        ? `taskhandle: ${name} is an option: put it after a command (taskhandle <command> ${name}); taskhandle help lists the commands\n`
        : `taskhandle ${name}: unknown command${didYouMean(name, EVERY_COMMAND)}; taskhandle help lists the commands\n`,
    );
    return EXIT.usage;
  }
  const command = name as keyof typeof COMMANDS;
  try {
    const parsed = parseCommandLine(command, rest, { ...COMMON, ...OPTIONS[command] });
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
