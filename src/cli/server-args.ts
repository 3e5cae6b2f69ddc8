import { didYouMean } from '../words/did-you-mean.js';
import { parseCommandLine } from './args.js';
import { CliError, EXIT } from './exit-codes.js';
import { COMMAND_HELP } from './help.js';

/** What main.ts runs besides the client commands, as the command line asked for it. */
export type ServerCommand =
  /** `skills`: the --skills modules (given: they replace SKILLS). */
  | { name: 'serve'; conformance: boolean; skills?: string[] }
  | { name: 'keys rotate'; card: boolean }
  | { name: 'api-keys add'; principal: string; tenant: string; label: string | undefined }
  /** `--help` of a server command: print `text` on stdout, exit 0. */
  | { name: 'help'; text: string };

export const SERVER_COMMANDS = ['serve', 'keys', 'api-keys'] as const;

const HELP = { help: { type: 'boolean', short: 'h' } } as const;

/** The one subcommand `keys` and `api-keys` take, or a usage error naming what was given. */
function subcommand(command: string, given: string | undefined, only: string): void {
  if (given === only) return;
  const reason =
    given === undefined
      ? `give a subcommand: taskhandle ${command} ${only}`
      : `unknown subcommand "${given}"${didYouMean(given, [only])}; the only one is "${only}"`;
  throw new CliError(EXIT.usage, reason);
}

/** Refuses positionals past the `expected` ones (settings come from the environment, not arguments). */
function noMore(command: string, extra: string[]): void {
  if (extra.length === 0) return;
  const hint = extra[0]?.includes('=')
    ? `: settings are environment variables, set before the command (${extra[0]} taskhandle ${command})`
    : '';
  throw new CliError(EXIT.usage, `unexpected argument "${extra[0]}"${hint}; taskhandle ${command} --help`);
}

/**
 * Parses the command line of `serve`, `keys rotate` and `api-keys add` (`argv` without node and the
 * script, starting with the command). Usage errors are CliErrors with EXIT.usage.
 *
 * @example
 *   parseServerCommand(['serve', '--conformance']) // { name: 'serve', conformance: true }
 *   parseServerCommand(['serve', '--skills', './a.mjs']) // { name: 'serve', conformance: false, skills: ['./a.mjs'] }
 */
export function parseServerCommand(argv: string[]): ServerCommand {
  const [command = '', ...args] = argv;
  switch (command) {
    case 'serve': {
      const { positionals, values } = parseCommandLine(command, args, {
        ...HELP,
        conformance: { type: 'boolean' },
        skills: { type: 'string', multiple: true },
      });
      if (values.help) return { name: 'help', text: COMMAND_HELP.serve ?? '' };
      noMore(command, positionals);
      const skills = (values.skills as string[] | undefined)?.flatMap((v) =>
        v
          .split(',')
          .map((p) => p.trim())
          .filter(Boolean),
      );
      return { name: 'serve', conformance: values.conformance === true, ...(skills && { skills }) };
    }
    case 'keys': {
      const { positionals, values } = parseCommandLine(command, args, { ...HELP, card: { type: 'boolean' } });
      if (values.help) return { name: 'help', text: COMMAND_HELP.keys ?? '' };
      subcommand(command, positionals[0], 'rotate');
      noMore(`${command} rotate`, positionals.slice(1));
      return { name: 'keys rotate', card: values.card === true };
    }
    case 'api-keys': {
      const { positionals, values } = parseCommandLine(command, args, {
        ...HELP,
        principal: { type: 'string' },
        tenant: { type: 'string' },
        label: { type: 'string' },
      });
      if (values.help) return { name: 'help', text: COMMAND_HELP['api-keys'] ?? '' };
      subcommand(command, positionals[0], 'add');
      noMore(`${command} add`, positionals.slice(1));
      const missing = ['principal', 'tenant'].filter((k) => !values[k]).map((k) => `--${k}`);
      if (missing.length > 0)
        throw new CliError(
          EXIT.usage,
          `${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} required: taskhandle api-keys add --principal NAME --tenant NAME`,
        );
      return {
        name: 'api-keys add',
        principal: values.principal,
        tenant: values.tenant,
        label: values.label,
      };
    }
    default:
      throw new CliError(EXIT.usage, `not a server command: ${command}`);
  }
}
