import type { Logger } from 'pino';

/** A started OpenTelemetry SDK: flushes what it holds and stops exporting. */
export interface TracingSdk {
  stop(): Promise<void>;
}

/** How long a stop waits for the last spans to leave (an exporter whose collector is down waits no longer). */
const STOP_MS = 5000;

/**
 * Whether the standard OTEL_* variables ask for traces: an OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT,
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), or OTEL_TRACES_EXPORTER naming an exporter (`otlp`, `zipkin`,
 * `console`); OTEL_SDK_DISABLED=true, or OTEL_TRACES_EXPORTER=none, keeps them off whatever else is set.
 */
export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  const set = (name: string) => (env[name]?.trim() ?? '') !== '';
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  if (exporters[0] === 'none') return false;
  return (
    exporters.length > 0 || set('OTEL_EXPORTER_OTLP_ENDPOINT') || set('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT')
  );
}

/**
 * Starts the OpenTelemetry SDK when the environment asks for traces (see {@link tracingRequested}),
 * before the server makes its first span. The SDK is imported only then: a server without tracing
 * loads none of it, and its spans are the API's no-ops.
 *
 * @example const tracing = await startTracing(process.env, logger); ...; await tracing?.stop();
 */
export async function startTracing(env: NodeJS.ProcessEnv, logger: Logger): Promise<TracingSdk | undefined> {
  if (!tracingRequested(env)) return undefined;
  const { startSdk } = await import('./otel-sdk.js');
  const sdk = startSdk(env, logger);
  logger.info(
    {
      exporter: env.OTEL_TRACES_EXPORTER?.trim() || 'otlp',
      endpoint: env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT || undefined,
      protocol: env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || undefined,
    },
    'tracing: OpenTelemetry SDK started (docs/tracing.md)',
  );
  let stopped: Promise<void> | undefined;
  return {
    stop() {
      stopped ??= Promise.race([
        sdk.shutdown().catch((err: unknown) => logger.warn({ err }, 'tracing: flushing spans failed')),
        new Promise<void>((resolve) => setTimeout(resolve, STOP_MS).unref()),
      ]);
      return stopped;
    },
  };
}
