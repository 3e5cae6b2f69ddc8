import type { ServerResponse } from 'node:http';
import { toLegacyHTTPError } from '@a2a-js/sdk/compat/v0_3/server';
import { RequestMalformedError, toRestErrorBody } from '@a2a-js/sdk/errors';
import type { Response } from 'express';
import type { Logger } from 'pino';
import { withSlotRetryAfter } from '../http/problem.js';
import { keepAlive } from '../http/sse.js';
import { type CallState, finalizeLegacyEvent } from './call-state.js';
import { INTERNAL_MESSAGE } from './errors.js';
import { holdOpen } from './hold.js';

/**
 * What the SDK's REST router writes, completed: SSE ids from the call's StreamCursor (whose reader
 * this is), v0.3's `final`, keep-alives, Retry-After on a 429, our words for its 500s, held sends.
 */

/**
 * The SDK's router writes each SSE event as `data: ...` with no id. Prefix the id (the sequence
 * number our handler recorded before yielding that event), mark a v0.3 stream's closing update
 * `final`, and keep the stream alive while idle.
 */
export function withSseIds(res: ServerResponse, state: CallState, keepAliveMs: number): void {
  const write = res.write.bind(res) as (chunk: unknown, ...rest: unknown[]) => boolean;
  let alive = false;
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    const sse = String(res.getHeader('content-type') ?? '').startsWith('text/event-stream');
    if (!sse || typeof chunk !== 'string') return write(chunk, ...rest);
    if (!alive) {
      alive = true;
      keepAlive(res, keepAliveMs, write);
    }
    if (!chunk.startsWith('data: ')) return write(chunk, ...rest);
    let data = chunk;
    if (state.version === '0.3' && state.cursor.closing) {
      const event: unknown = JSON.parse(chunk.slice('data: '.length));
      finalizeLegacyEvent(event, state.cursor);
      data = `data: ${JSON.stringify(event)}\n\n`;
    }
    const id = state.cursor.seq;
    return write(id === undefined ? data : `id: ${id}\n${data}`, ...rest);
  }) as ServerResponse['write'];
}
/** A 429 the SDK's router writes (our too-many-tasks error) gets the Retry-After that 429 calls for. */
export function withRetryAfter(res: Response): void {
  const writeHead = res.writeHead;
  res.writeHead = function (this: Response, ...args: Parameters<Response['writeHead']>) {
    withSlotRetryAfter(this, args[0]);
    return writeHead.apply(this, args);
  } as Response['writeHead'];
}

/**
 * The SDK's REST router answers a JS failure while decoding a request (a `null` where its decoder
 * reads an object) with 500 and the JS message. Our internal failures carry {@link INTERNAL_MESSAGE};
 * any other 500 is a request the route could not read: a 400 in our words, the original logged.
 */
export function withOwnWords(res: Response, legacy: boolean, logger: Logger): void {
  const json = res.json.bind(res);
  res.json = (body: unknown) => {
    const canonical = legacy ? undefined : CANONICAL_STATUS[res.statusCode];
    const refusal = (body as { error?: { status?: unknown } } | undefined)?.error;
    // Our own refusals ride on the SDK's UnsupportedOperation (FAILED_PRECONDITION): a 429 or 403
    // says its own AIP-193 status, as the HTTP status does.
    if (canonical && refusal && typeof refusal === 'object') refusal.status = canonical;
    if (res.statusCode !== 500) return json(body);
    const b = body as { message?: unknown; error?: { message?: unknown } } | undefined;
    const message = legacy ? b?.message : b?.error?.message;
    if (message === INTERNAL_MESSAGE) return json(body);
    logger.warn({ cause: message, url: res.req.originalUrl }, 'REST request the SDK could not decode');
    const error = new RequestMalformedError(
      'Invalid params: the request does not have the shape this route takes',
    );
    res.status(400);
    return json(legacy ? toLegacyHTTPError(error) : toRestErrorBody(error, 400));
  };
}

/** The AIP-193 status of the HTTP statuses our own refusals answer with. */
const CANONICAL_STATUS: Record<number, string> = {
  403: 'PERMISSION_DENIED',
  // TaskGenerationMismatchError, the A2A 1.1 draft's only 409 (section 11.6's example).
  409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED',
};

/**
 * Lets the handler hold a blocking send's answer open (hold.ts) with `status`, the one the SDK's
 * router answers a send with. The SDK then writes the task with `res.json`, which here follows the
 * spaces. A held send that fails after all (the store unreachable) can no longer say so with its
 * status: its connection is cut, so that the client sees a failure rather than a 200 without a task.
 */
export function withHold(res: Response, state: CallState, keepAliveMs: number, status: number): void {
  let stop: (() => void) | undefined;
  let answered = false;
  state.hold = () => {
    stop ??= holdOpen(res, keepAliveMs, status);
  };
  const json = res.json.bind(res);
  res.json = (body: unknown) => {
    stop?.();
    if (!res.headersSent) return json(body);
    answered = res.statusCode === status;
    if (answered) res.end(JSON.stringify(body));
    else res.destroy();
    return res;
  };
  // The SDK ends a response whose headers are out without a body when the call failed.
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  res.end = ((...args: unknown[]) => {
    if (stop === undefined || !res.headersSent || answered) return end(...args);
    stop();
    res.destroy();
    return res;
  }) as Response['end'];
}
