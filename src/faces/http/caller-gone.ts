import type { ServerResponse } from 'node:http';

/** Aborted when the caller goes away or the server shuts down: what a long poll waits with. */
export function callerGone(res: ServerResponse, shutdown: AbortSignal): AbortSignal {
  const gone = new AbortController();
  // A reason string: abort() would build a DOMException (with its stack) for each one.
  if (res.closed) gone.abort('client gone');
  else res.once('close', () => gone.abort('client gone'));
  return AbortSignal.any([gone.signal, shutdown]);
}
