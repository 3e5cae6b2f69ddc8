import type { Registry } from 'prom-client';

/**
 * The value of sample `name` (a histogram's `_count` or `_sum` included) whose labels include
 * `labels`, in `registry` as a scrape would collect it now; 0 when there is none yet.
 */
export async function sampleOf(
  registry: Registry,
  name: string,
  labels: Record<string, string | number> = {},
): Promise<number> {
  const family = name.replace(/_(count|sum|bucket)$/, '');
  const metric = registry.getSingleMetric(family);
  if (!metric) throw new Error(`no metric ${family}`);
  const { values } = await metric.get();
  // A histogram's values name their series (`_bucket`, `_sum`, `_count`); prom-client's types omit it.
  const found = (values as { metricName?: string; labels: object; value: number }[]).find(
    (v) =>
      (v.metricName ?? family) === name &&
      Object.entries(labels).every(
        ([k, want]) => String((v.labels as Record<string, unknown>)[k]) === String(want),
      ),
  );
  return found?.value ?? 0;
}
