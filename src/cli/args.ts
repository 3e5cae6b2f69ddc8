import { parseArgs } from 'node:util';
import { didYouMean } from '../words/did-you-mean.js';
import { CliError, EXIT } from './exit-codes.js';

export type Options = NonNullable<NonNullable<Parameters<typeof parseArgs>[0]>['options']>;

export interface Parsed {
  positionals: string[];
  // biome-ignore lint/suspicious/noExplicitAny: parseArgs values, checked per command
  values: Record<string, any>;
}

const shown = (name: string, options: Options): string => {
  const short = options[name]?.short;
  return short ? `-${short}/--${name}` : `--${name}`;
};

/**
 * Parses `args` for `command` against `options`, refusing what parseArgs would, in our words: an
 * unknown option (with the nearest known one), a value missing or given where none is taken. The
 * reason is thrown as a usage error (exit 2), printed as `taskhandle <command>: <reason>`.
 *
 * @example
 *   const { positionals, values } = parseCommandLine('get', ['abc', '--json'], { json: { type: 'boolean' } });
 */
export function parseCommandLine(command: string, args: string[], options: Options): Parsed {
  const { tokens } = parseArgs({ args, options, strict: false, allowPositionals: true, tokens: true });
  const known = Object.keys(options);
  const seeHelp = `; taskhandle ${command} --help lists its options`;
  for (const token of tokens) {
    if (token.kind !== 'option') continue;
    const option = options[token.name];
    if (!option) {
      const guess = didYouMean(token.name, known, (k) => `--${k}`);
      throw new CliError(EXIT.usage, `unknown option ${token.rawName}${guess}${seeHelp}`);
    }
    if (
      option.type === 'string' &&
      (token.value === undefined || (!token.inlineValue && token.value.startsWith('-')))
    )
      throw new CliError(EXIT.usage, `${shown(token.name, options)} needs a value`);
    if (option.type === 'boolean' && token.value !== undefined)
      throw new CliError(EXIT.usage, `${shown(token.name, options)} takes no value (got "${token.value}")`);
  }
  try {
    const { positionals, values } = parseArgs({ args, options, strict: true, allowPositionals: true });
    return { positionals, values };
  } catch (e) {
    // What the checks above do not foresee: still a usage error, never a stack trace.
    throw new CliError(EXIT.usage, `${(e as Error).message}${seeHelp}`);
  }
}
