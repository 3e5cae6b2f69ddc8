import type { Registry } from 'prom-client';

/** A sample as prom-client's registry writes it. */
interface Sample {
  metricName?: string;
  labels: Record<string, string | number>;
  value: number;
}

/** What a registry reads of a metric: prom-client's own metrics have this shape too. */
interface Family {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  get(): Promise<{ name: string; help: string; type: string; values: Sample[]; aggregator: 'sum' }>;
}

/** One counter of one label set: a number that only grows. */
export class PlainCount {
  value = 0;
  constructor(readonly labels: Record<string, string>) {}
}

/** One histogram of one label set: bucket counts, their sum and count. */
export class PlainHistogram {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(
    readonly labels: Record<string, string>,
    readonly buckets: readonly number[],
  ) {
    this.counts = new Float64Array(buckets.length);
  }

  observe(value: number): void {
    const { buckets, counts } = this;
    for (let i = 0; i < buckets.length; i++) {
      if (value <= (buckets[i] as number)) {
        counts[i] = (counts[i] as number) + 1;
        break;
      }
    }
    this.sum += value;
    this.count++;
  }
}

/**
 * Registers a counter family whose series are plain numbers the caller increments: on a hot path,
 * a series found once costs an addition, where prom-client builds its label key on every call.
 * prom-client's registry reads it at scrape time as it reads its own metrics.
 */
export function plainCounter(
  registry: Registry,
  name: string,
  help: string,
  series: () => Iterable<PlainCount>,
) {
  register(registry, {
    name,
    help,
    type: 'counter',
    get: async () => ({
      name,
      help,
      type: 'counter',
      aggregator: 'sum',
      values: [...series()].map((s) => ({ labels: s.labels, value: s.value })),
    }),
  });
}

/** Registers a histogram family of {@link PlainHistogram}s, written as prom-client writes histograms. */
export function plainHistogram(
  registry: Registry,
  name: string,
  help: string,
  series: () => Iterable<PlainHistogram>,
) {
  register(registry, {
    name,
    help,
    type: 'histogram',
    get: async () => ({
      name,
      help,
      type: 'histogram',
      aggregator: 'sum',
      values: [...series()].flatMap((h) => {
        let cumulative = 0;
        const buckets: Sample[] = h.buckets.map((le, i) => {
          cumulative += h.counts[i] as number;
          return { metricName: `${name}_bucket`, labels: { le, ...h.labels }, value: cumulative };
        });
        return [
          ...buckets,
          { metricName: `${name}_bucket`, labels: { le: '+Inf', ...h.labels }, value: h.count },
          { metricName: `${name}_sum`, labels: h.labels, value: h.sum },
          { metricName: `${name}_count`, labels: h.labels, value: h.count },
        ];
      }),
    }),
  });
}

// The registry takes any object of this shape (it reads name, help, type and get()); its types name
// only prom-client's own classes.
const register = (registry: Registry, family: Family) =>
  registry.registerMetric(family as unknown as Parameters<Registry['registerMetric']>[0]);
