import type { LoadResult } from './load.js';
import { ms, table } from './report.js';
import { type Results, runOf, summarise } from './results.js';
import { ARTIFACT_KINDS, type FullDownload, RANGED_REQUESTS } from './scenarios/artifact.js';
import { SERVER_LABELS } from './servers/kinds.js';
import { median } from './stats.js';
import type { TargetRow } from './targets.js';

/** The large-artifact scenario in the report: its targets (issue 13), its tables, how it was measured. */

const GIB = 2 ** 30;
const RSS_LIMIT_MB = 64;
const GET_RATIO = 2;
const REFUSAL_RATIO = 1.5;

const ran = (r: Results) =>
  ARTIFACT_KINDS.flatMap((k) => {
    const a = r.artifact?.[k];
    return a ? [[k, a] as const] : [];
  });

const fixed = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : '-');

/** Issue 13's targets on each store; never asserted, only reported. */
export function artifactTargets(r: Results): TargetRow[] {
  const rows: TargetRow[] = [];
  for (const [k, a] of ran(r)) {
    const store = SERVER_LABELS[k];
    const full = a.bytes >= GIB;
    const verdict = (ok: boolean): TargetRow['verdict'] => (!full ? 'not measured' : ok ? 'met' : 'NOT MET');
    const size = full ? '' : ` (only ${fixed(a.bytes / 2 ** 20, 1)} MiB in this run)`;
    const growth = {
      writing: a.rssMb.writePeak - a.rssMb.before,
      'GetTask and refusal loads': a.rssMb.loadPeak - a.rssMb.before,
      downloads: a.rssMb.downloadPeak - a.rssMb.before,
    };
    const worst = Math.max(...Object.values(growth));
    rows.push({
      target: `${store}: server RSS growth <= ${RSS_LIMIT_MB} MB while a 1 GiB artifact is written and downloaded`,
      measured: `peak − before (${fixed(a.rssMb.before)} MB): ${Object.entries(growth)
        .map(([what, g]) => `${what} +${fixed(g)} MB`)
        .join(', ')}; worst ${(worst / RSS_LIMIT_MB).toFixed(2)}× the limit${size}`,
      verdict: verdict(worst <= RSS_LIMIT_MB),
    });
    const ratio = (target: string, a1: LoadResult[], b1: LoadResult[], limit: number, p50Too: boolean) => {
      const x = summarise(a1);
      const y = summarise(b1);
      if (!x || !y) {
        rows.push({ target, measured: '-', verdict: 'not measured' });
        return;
      }
      const r99 = x.p99Ms / y.p99Ms;
      const r50 = x.p50Ms / y.p50Ms;
      const ok = r99 <= limit && (!p50Too || r50 <= limit);
      rows.push({
        target,
        measured:
          `p99 ${ms(x.p99Ms)} vs ${ms(y.p99Ms)} ms (${fixed(r99, 2)}×), p50 ${ms(x.p50Ms)} vs ${ms(y.p50Ms)} ms (${fixed(r50, 2)}×); ` +
          `needs p99${p50Too ? ' and p50' : ''} <= ${limit}×${size}`,
        verdict: verdict(ok && Number.isFinite(r99)),
      });
    };
    ratio(
      `${store}: GetTask of the 1 GiB task, p99 <= ${GET_RATIO}× a small task's`,
      a.large,
      a.small,
      GET_RATIO,
      false,
    );
    ratio(
      `${store}: a non-owner's GetTask of that task, refused within ${REFUSAL_RATIO}× a missing id's latency`,
      a.refusals.getForeign,
      a.refusals.getMissing,
      REFUSAL_RATIO,
      true,
    );
    ratio(
      `${store}: a non-owner's download of that task's file, refused within ${REFUSAL_RATIO}× a missing id's latency`,
      a.refusals.downloadForeign,
      a.refusals.downloadMissing,
      REFUSAL_RATIO,
      true,
    );
  }
  return rows;
}

export function artifactTargetsTable(r: Results): string {
  const rows = artifactTargets(r);
  if (!rows.length) return 'Not measured.';
  return table(
    ['target', 'measured (medians over rounds)', 'result'],
    rows.map((t) => [t.target, t.measured, t.verdict === 'NOT MET' ? '**NOT MET**' : t.verdict]),
  );
}

/** Writing, downloading and memory, one row per store. */
export function artifactTable(r: Results): string {
  const rows = ran(r).map(([k, a]) => {
    const d = medianDownload(a.downloads);
    return [
      SERVER_LABELS[k],
      `${a.rows.toLocaleString('en')} rows, ${(a.bytes / 2 ** 20).toFixed(1)} MiB`,
      fixed(a.writeS, 1),
      fixed(a.writeMibPerS, 1),
      fixed(a.writeServerCpu, 2),
      fixed(a.writeServerCpu * a.writeS),
      fixed(d?.mibPerS ?? Number.NaN),
      fixed(d?.serverCpu ?? Number.NaN, 2),
      `${ms(a.ranged.p50Ms)} / ${ms(a.ranged.p99Ms)}`,
      fixed(a.rssMb.before),
      fixed(a.rssMb.writePeak),
      fixed(a.rssMb.afterWrite ?? Number.NaN),
      fixed(a.rssMb.loadPeak),
      fixed(a.rssMb.downloadPeak),
      fixed(d?.rssGrowthMb ?? Number.NaN, 1),
      fixed(a.rssMb.after),
    ];
  });
  return table(
    [
      'server',
      'file',
      'write s',
      'write MiB/s',
      'server CPU writing',
      'server CPU-s writing',
      'download MiB/s',
      'server CPU downloading',
      'last MiB (Range) p50 / p99 ms',
      'RSS before MB',
      'RSS peak writing',
      'RSS 1 s after writing',
      'RSS peak loads',
      'RSS peak downloads',
      'RSS growth in a download',
      'RSS after',
    ],
    rows,
  );
}

/** The GetTask and refusal loads, medians over rounds. */
export function artifactLatencyTable(r: Results): string {
  const rows: string[][] = [];
  for (const [k, a] of ran(r)) {
    const loads: [string, LoadResult[], LoadResult[] | undefined][] = [
      ['GetTask, small task (owner)', a.small, undefined],
      ['GetTask, 1 GiB task (owner)', a.large, a.small],
      ['GetTask, missing id (other principal)', a.refusals.getMissing, undefined],
      ['GetTask, 1 GiB task (other principal)', a.refusals.getForeign, a.refusals.getMissing],
      ['download, missing id (other principal)', a.refusals.downloadMissing, undefined],
      ['download, 1 GiB task (other principal)', a.refusals.downloadForeign, a.refusals.downloadMissing],
    ];
    for (const [what, list, base] of loads) {
      const s = summarise(list);
      const b = summarise(base);
      if (!s) continue;
      rows.push([
        SERVER_LABELS[k],
        what,
        fixed(s.rps),
        ms(s.p50Ms),
        ms(s.p99Ms),
        b ? `${fixed(s.p50Ms / b.p50Ms, 2)}× / ${fixed(s.p99Ms / b.p99Ms, 2)}×` : '',
        fixed(s.serverCpu, 2),
        fixed(s.serverRssMbMax),
        String(s.failures),
      ]);
    }
  }
  return table(
    [
      'server',
      'load',
      'req/s',
      'p50 ms',
      'p99 ms',
      'p50 / p99 × the row above',
      'server CPU',
      'server RSS MB',
      'failed',
    ],
    rows,
  );
}

/** The "How it was measured" bullet. */
export function artifactMethod(r: Results): string {
  const o = runOf(r, 'artifact')?.options ?? r.options;
  if (o.artifactRows === undefined) return '';
  return `- **large artifact** (issue 13): one process per store (SQLite; PostgreSQL when it answers) with
  \`API_KEYS_FILE\` holding two principals (acme/alice owns the tasks, globex/mallory is the other one) and
  \`MAX_ARTIFACT_BYTES\` raised to 8 GiB (the default 100 MiB would refuse the export). alice runs a 100-row
  export (its file inline in the task) and a ${o.artifactRows.toLocaleString('en')}-row export, ${o.artifactChunkRows.toLocaleString('en')} rows a chunk
  (\`{"skill":"export","input":{"rows":${o.artifactRows},"chunkRows":${o.artifactChunkRows}}}\`); write time runs from its
  \`SendMessage\` to its completed status's timestamp. The server's RSS is read from /proc every 50 ms. "Before" is
  read after the same six loads (below, each for the warm-up time) and a whole download were run on a linked
  20,000-row file (1.7 MB) and 1 s of rest, so that what the loads themselves hold (their connections, warmed
  code) is in the baseline and what the large file adds is not; then the peak while writing, during the loads,
  and during the whole downloads. Each round then runs six loads (same settings as create and poll, order
  rotating): GetTask (historyLength 0) of the small and the large task as alice; GetTask of a random missing
  id and of the large task as mallory (a JSON-RPC error is the expected answer there, anything else a
  failure); \`GET /v1/jobs/{id}/artifacts/{artifactId}\` as mallory for a missing id and for the large task
  (404 expected); then one whole download of the file as alice (node:http, bytes counted and dropped; every
  byte must arrive) and ${RANGED_REQUESTS} requests of its last MiB (\`Range: bytes=-1048576\`, 206 with
  that MiB expected), one at a time.`;
}

/** Every load measurement of the large-artifact scenario. */
export function artifactLoads(r: Results): LoadResult[] {
  return Object.values(r.artifact ?? {}).flatMap((a) => [
    ...a.small,
    ...a.large,
    ...Object.values(a.refusals).flat(),
  ]);
}

/** Medians of the downloads of the rounds. */
export function medianDownload(list: readonly FullDownload[]): FullDownload | undefined {
  if (!list.length) return undefined;
  const m = (f: (d: FullDownload) => number) => median(list.map(f));
  return {
    bytes: m((d) => d.bytes),
    seconds: m((d) => d.seconds),
    mibPerS: m((d) => d.mibPerS),
    rssGrowthMb: Math.max(...list.map((d) => d.rssGrowthMb)),
    serverCpu: m((d) => d.serverCpu),
    clientCpu: m((d) => d.clientCpu),
  };
}
