import type { IncomingMessage, ServerResponse } from 'node:http';
import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { headerValue } from './trace-context.js';
import { remoteContext, startSpan } from './tracing.js';

const MAX_PATH_CHARS = 1024;

/**
 * Serves one HTTP request inside a server span (`POST /v1/jobs`: the method and the face it
 * reached), the child of the caller's `traceparent` when it sent a valid one, else a new trace.
 * Everything the request sets off (the task's creation, an answer) is traced under it. The span
 * ends when the response does (a stream's, when the stream closes). Without an SDK and without a
 * `traceparent` it costs one no-op span and nothing else.
 *
 * @example createServer((req, res) => traceRequest(req, res, ROUTES, () => app(req, res)));
 */
export function traceRequest(
  req: IncomingMessage,
  res: ServerResponse,
  routes: readonly string[],
  handle: () => void,
): void {
  const { traceparent, tracestate } = req.headers;
  const parent =
    traceparent === undefined
      ? ROOT_CONTEXT
      : (remoteContext({ traceparent: headerValue(traceparent), tracestate: headerValue(tracestate) }) ??
        ROOT_CONTEXT);
  const method = req.method ?? 'GET';
  const path = pathOf(req.url);
  const route = routeOf(path, routes);
  const started = startSpan(route ? `${method} ${route}` : method, { kind: SpanKind.SERVER, parent });
  if (!started) {
    handle();
    return;
  }
  const { span } = started;
  span.setAttributes({
    'http.request.method': method,
    'url.path': path.length > MAX_PATH_CHARS ? path.slice(0, MAX_PATH_CHARS) : path,
    'url.scheme': 'http',
    ...(route ? { 'http.route': route } : {}),
  });
  res.once('close', () => {
    span.setAttribute('http.response.status_code', res.statusCode);
    if (res.statusCode >= 500) {
      span.setAttribute('error.type', String(res.statusCode));
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  });
  context.with(started.context, handle);
}

/** The path without its query (which may carry what is not ours to record). */
function pathOf(url: string | undefined): string {
  if (!url) return '/';
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/** The face a path reached (its mount point), for a span name that does not grow with task ids. */
function routeOf(path: string, routes: readonly string[]): string | undefined {
  let best: string | undefined;
  for (const r of routes) {
    const hit = path === r || (r === '/' ? false : path.startsWith(r.endsWith('/') ? r : `${r}/`));
    if (hit && (best === undefined || r.length > best.length)) best = r;
  }
  return best;
}
