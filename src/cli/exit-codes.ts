/**
 * Exit codes of the client commands: part of the interface scripts rely on (docs/cli.md lists them).
 * Declared once here; every command ends through one of them.
 */
export const EXIT = {
  /** Done: the request succeeded, or the task completed. */
  ok: 0,
  /** The task ended without success: failed, rejected or canceled. */
  taskFailed: 1,
  /** Bad command line: unknown command or option, missing argument, --input that is not JSON. */
  usage: 2,
  /** The agent does not know the task (or it is not the caller's). */
  notFound: 3,
  /** Credentials missing or refused (HTTP 401 or 403). */
  auth: 4,
  /** The agent could not be reached (refused, reset, DNS, timeout). */
  connection: 5,
  /** The task waits for input (input-required or auth-required). */
  inputRequired: 6,
  /** The agent refused the request: any other JSON-RPC error or an unexpected HTTP answer. */
  refused: 7,
  /** `result` of a task that has not finished yet (still submitted or working). */
  notReady: 8,
  /** `card verify`: the card has no signature that verifies (or none at all). */
  unverified: 9,
  /** Ctrl-C (SIGINT) stopped the command; the task itself goes on (128 + SIGINT, as shells count). */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A failure that ends the command with `exitCode` and prints `message` on stderr. */
export class CliError extends Error {
  readonly exitCode: ExitCode;
  /** The JSON-RPC error code when the agent answered with one. */
  readonly rpcCode: number | undefined;
  constructor(exitCode: ExitCode, message: string, rpcCode?: number) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
    this.rpcCode = rpcCode;
  }
}

/** A2A's TaskNotFound. */
export const TASK_NOT_FOUND = -32001;
