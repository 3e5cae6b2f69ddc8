import { EXIT, type ExitCode } from './exit-codes.js';

/** The task-handle extension's metadata key (createdAt, pollIntervalMs, progress...). */
export const HANDLE_EXTENSION = 'https://taskhandle.dev/extensions/task-handle/v1';

const TERMINAL = new Set([
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_REJECTED',
]);
const INTERRUPTED = new Set(['TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_AUTH_REQUIRED']);

export const isTerminal = (state: string): boolean => TERMINAL.has(state);
/** Terminal, or waiting for the caller: a waiting command stops here. */
export const isSettled = (state: string): boolean => TERMINAL.has(state) || INTERRUPTED.has(state);

/** `TASK_STATE_INPUT_REQUIRED` -> `input-required`; other spellings (v0.3 `input-required`) pass. */
export const shortState = (state: string): string =>
  state
    .replace(/^TASK_STATE_/, '')
    .toLowerCase()
    .replaceAll('_', '-');

/** The exit code a settled task ends a waiting command with. */
export function exitCodeOf(state: string): ExitCode {
  if (state === 'TASK_STATE_COMPLETED') return EXIT.ok;
  if (INTERRUPTED.has(state)) return EXIT.inputRequired;
  if (TERMINAL.has(state)) return EXIT.taskFailed;
  return EXIT.notReady;
}
