import { context, SpanKind, trace } from '@opentelemetry/api';
import { inSpan, remoteContext } from './tracing.js';

/**
 * Serves one MCP request inside a server span, as the MCP semantic conventions name it
 * (`tools/call export`): the child of `params._meta.traceparent` when the client sent a valid one
 * (linked to the HTTP request's span, which it then leaves), else of the HTTP request's span. A tool
 * name goes into the span's name only when `isTool` knows it: made-up names must not multiply span
 * names.
 *
 * @example const result = await traceMcp(method, params, (name) => skills.get(name) !== undefined, () => handler(call));
 */
export function traceMcp<T>(
  method: string,
  params: Record<string, unknown>,
  isTool: (name: string) => boolean,
  work: () => Promise<T>,
): Promise<T> {
  const meta = params._meta;
  const carrier =
    typeof meta === 'object' && meta !== null
      ? (meta as { traceparent?: unknown; tracestate?: unknown })
      : undefined;
  const fromMeta =
    typeof carrier?.traceparent === 'string'
      ? remoteContext({
          traceparent: carrier.traceparent,
          tracestate: typeof carrier.tracestate === 'string' ? carrier.tracestate : undefined,
        })
      : undefined;
  const request = trace.getSpanContext(context.active());
  const tool =
    method === 'tools/call' && typeof params.name === 'string' && isTool(params.name)
      ? params.name
      : undefined;
  return inSpan(
    tool ? `${method} ${tool}` : method,
    {
      kind: SpanKind.SERVER,
      parent: fromMeta,
      links: fromMeta && request ? [{ context: request }] : undefined,
      attributes: {
        'mcp.method.name': method,
        ...(tool ? { 'gen_ai.tool.name': tool, 'gen_ai.operation.name': 'execute_tool' } : {}),
      },
    },
    work,
  );
}
