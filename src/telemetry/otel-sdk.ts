import { DiagLogLevel, diag } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { Logger } from 'pino';

/**
 * The OpenTelemetry SDK for traces, configured by the standard OTEL_* variables (exporter, endpoint,
 * protocol, headers, sampler, batch sizes, resource). Loaded by sdk.ts only when tracing is asked
 * for. Traces only: no metric readers or log processors (the SDK would otherwise default them to
 * OTLP too), and no auto-instrumentation (the server makes its own spans, telemetry/tracing.ts).
 */
export function startSdk(env: NodeJS.ProcessEnv, logger: Logger): NodeSDK {
  // The SDK's own complaints (an unreachable collector, a bad variable) go to our log, unless OTEL_LOG_LEVEL asks for the SDK's console logger.
  if (!env.OTEL_LOG_LEVEL) {
    const warn = (message: string) => logger.warn({ otel: true }, `tracing: ${message}`);
    diag.setLogger(
      { error: warn, warn, info: () => {}, debug: () => {}, verbose: () => {} },
      { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
    );
  }
  const named =
    Boolean(env.OTEL_SERVICE_NAME) || /(^|,)\s*service\.name\s*=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '');
  const sdk = new NodeSDK({
    instrumentations: [],
    metricReaders: [],
    logRecordProcessors: [],
    ...(named ? {} : { serviceName: 'taskhandle' }),
  });
  sdk.start();
  return sdk;
}
