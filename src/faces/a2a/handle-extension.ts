/**
 * The task-handle extension: every task's `metadata` carries, under this URI, what a caller needs to
 * poll it well and to know how long it is kept. Declared in the agent card; see docs/handle-extension.md.
 */
export const HANDLE_EXTENSION_URI = 'https://taskhandle.dev/extensions/task-handle/v1';

export const HANDLE_EXTENSION_CARD_ENTRY = {
  uri: HANDLE_EXTENSION_URI,
  description:
    'Task handles: metadata[uri] on every task holds createdAt, lastUpdatedAt, pollIntervalMs (suggested poll ' +
    'interval, may change while the task runs), ttlMs and expiresAt (retention from creation) and progress ' +
    '(percent, message) where the skill reports it.',
  required: false,
};
