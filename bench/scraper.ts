import { BENCH_METRICS_TOKEN } from './servers/launch.js';

/** Once a second: harsher than Prometheus' default 15 s, so that the scrapes' cost shows too. */
const SCRAPE_MS = 1000;

/**
 * Scrapes `base`/metrics every second, as Prometheus would, until the returned function is called;
 * that resolves with how many scrapes answered, and fails if one did not (a bench of a server
 * whose metrics are broken measures nothing worth reporting).
 */
export function scrapeWhile(base: string): () => Promise<number> {
  let scrapes = 0;
  let failure: string | undefined;
  const once = async () => {
    const res = await fetch(`${base}/metrics`, {
      headers: { Authorization: `Bearer ${BENCH_METRICS_TOKEN}` },
    });
    const text = await res.text();
    if (res.status !== 200 || !text.includes('taskhandle_http_requests_total'))
      failure ??= `GET /metrics answered ${res.status}`;
    else scrapes++;
  };
  let running: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    running = running.then(once).catch((err: Error) => {
      failure ??= `GET /metrics failed: ${err.message}`;
    });
  }, SCRAPE_MS);
  return async () => {
    clearInterval(timer);
    await running;
    if (failure) throw new Error(`metrics scrape: ${failure}`);
    return scrapes;
  };
}
