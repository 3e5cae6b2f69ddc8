import type { Agent } from './harness.js';

/** One scrape: every sample by its name and labels, as `name{a="1",b="2"}` with the labels sorted. */
export type Samples = Map<string, number>;

/** Parses Prometheus' text format (what /metrics answers): comments skipped, labels sorted. */
export function parseMetrics(text: string): Samples {
  const samples: Samples = new Map();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match?.[1] || match[3] === undefined) throw new Error(`not a Prometheus sample: ${line}`);
    const labels = [...(match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map(
      ([, k, v]) => `${k}="${v}"`,
    );
    samples.set(key(match[1], labels), Number(match[3]));
  }
  return samples;
}

const key = (name: string, labels: string[]) =>
  labels.length === 0 ? name : `${name}{${[...labels].sort().join(',')}}`;

/** The sample `name` with `labels` (0 when the scrape has none: a series appears with its first count). */
export function sample(samples: Samples, name: string, labels: Record<string, string> = {}): number {
  return (
    samples.get(
      key(
        name,
        Object.entries(labels).map(([k, v]) => `${k}="${v}"`),
      ),
    ) ?? 0
  );
}

/** Where the agent's own metrics listener serves (METRICS_PORT), from its log line. */
export function metricsUrl(agent: Agent): string | undefined {
  const line = agent.logs.find((l) => l.msg?.toString().startsWith('metrics served at'));
  return (line?.metrics as { url?: string } | undefined)?.url;
}

/** Scrapes `url` with the bearer `token`; fails unless it answers 200 in the text format. */
export async function scrape(url: string, token: string): Promise<Samples> {
  const res = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`scrape of ${url}: ${res.status} ${text}`);
  if (!res.headers.get('content-type')?.startsWith('text/plain')) throw new Error('not the text format');
  return parseMetrics(text);
}
