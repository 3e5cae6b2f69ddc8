import { Counter, Histogram, type Registry } from 'prom-client';
import type { DeliveryObserver, DeliveryResult } from '../push/delivery-observer.js';

/** Seconds from a task's transition to the receiver's 2xx: at once, or after hours of retries. */
const LATENCY_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 21_600, 86_400];
const RESULTS: readonly DeliveryResult[] = ['delivered', 'retried', 'dead-lettered', 'refused'];

/** Webhook delivery as this instance's dispatcher settles it. */
export class PushMetrics implements DeliveryObserver {
  readonly #attempts: Record<DeliveryResult, Counter.Internal>;
  readonly #latency: Histogram;

  constructor(registry: Registry) {
    const attempts = new Counter({
      name: 'taskhandle_push_deliveries_total',
      help: 'Webhook delivery attempts by outcome: delivered (2xx), retried, dead-lettered, refused (by the address policy; dead-lettered)',
      labelNames: ['outcome'],
      registers: [registry],
    });
    // Every outcome from the start: an alert on rate(...{outcome="dead-lettered"}) needs the series.
    for (const outcome of RESULTS) attempts.inc({ outcome }, 0);
    this.#attempts = Object.fromEntries(RESULTS.map((r) => [r, attempts.labels(r)])) as Record<
      DeliveryResult,
      Counter.Internal
    >;
    this.#latency = new Histogram({
      name: 'taskhandle_push_delivery_latency_seconds',
      help: "From a notification's event (the transition) to the receiver's 2xx, retries included",
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    });
  }

  settled(result: DeliveryResult, latencyMs?: number): void {
    this.#attempts[result].inc();
    if (latencyMs !== undefined) this.#latency.observe(Math.max(0, latencyMs) / 1000);
  }
}
