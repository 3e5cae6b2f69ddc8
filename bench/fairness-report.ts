import { ms, table } from './report.js';
import type { Results } from './results.js';

/** The "Fair claims (issue 19)" section of bench/BENCHMARKS.md, from the fairness scenario's results. */
export function fairnessSection(r: Results): string {
  const f = r.fairness ?? [];
  if (!f.length) return 'Not measured.\n';
  const waits = table(
    ['store', 'short jobs', 'create to working p50 ms', 'p99 ms', 'max ms'],
    f.map((x) => [x.store, String(x.wait.n), ms(x.wait.p50), ms(x.wait.p99), ms(x.wait.max)]),
  );
  const claims = table(
    ['store', 'queued tasks', 'claims/s (each of 16, completed)', 'claim p50 ms', 'claim p99 ms'],
    f.flatMap((x) =>
      x.claimRate.map((c) => [
        x.store,
        c.queued.toLocaleString('en'),
        String(c.claimsPerS),
        ms(c.p50Ms),
        ms(c.p99Ms),
      ]),
    ),
  );
  return `One tenant floods 10,000 jobs of 4 s on average (2 to 6 s, so that slots free one at a time) onto
16 runner slots; another tenant then submits 60 short jobs, one every 300 ms. A slot frees every
250 ms on average, at random moments: waiting for the next one takes about 170 ms at p50 and about
1.2 s at p99. A global FIFO by creation time (the claim before issue 19) would make each wait for the
flood ahead of it: 10,000 x 4 s / 16 slots, about 2,500 s. The server is createServer in the bench's
process (store, engine and runner as \`serve\` builds them), the jobs created over A2A JSON-RPC with
each tenant's API key; a short job's wait ends when its run starts (the skill notes it on the same clock).

${waits}

The claim alone: 16 tasks per claim, each claimed batch completed before the next claim, with 1,000
queued tasks (100 principals, 10 each) and with 1,000,000 (one principal holding 999,000 more),
seeded in SQL and analyzed, on the store alone (perf/claim-rate.ts of the root package, run as a
process: the store is not public API). Claims/s counts the 16 completions too; the claim's own time is the
p50/p99. The cost follows the queued principals and the running tasks, not the queue's length.

${claims}
`;
}
