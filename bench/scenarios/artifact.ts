import { randomUUID } from 'node:crypto';
import { writeKeysFile } from '../api-keys.js';
import { type Download, download, PeakMeter } from '../download.js';
import { type LoadOptions, type LoadResult, measure } from '../load.js';
import { call, getBody, sendBody } from '../rpc.js';
import type { ServerKind } from '../servers/kinds.js';
import { launch } from '../servers/launch.js';
import { percentile, sleep } from '../stats.js';
import type { Load } from './create.js';

/** The kinds the large-artifact scenario runs on: one process on each store. */
export const ARTIFACT_KINDS = ['taskhandle', 'taskhandle-pg'] as const satisfies readonly ServerKind[];
export type ArtifactKind = (typeof ARTIFACT_KINDS)[number];

/** Requests of the file's last MiB per round, one at a time. */
export const RANGED_REQUESTS = 20;

export interface ArtifactOptions {
  /** Rows of the large export (12,500,000 CSV rows: 1.00 GiB) and rows per chunk the skill writes. */
  rows: number;
  chunkRows: number;
  rounds: number;
  load: Load;
  /** Run the loads once before reading the RSS baseline (a smoke run, whose memory means nothing, skips it). */
  warmBaseline: boolean;
}

/** The four loads that compare a refusal on the large task with one on an id that does not exist. */
export interface Refusals {
  getMissing: LoadResult[];
  getForeign: LoadResult[];
  downloadMissing: LoadResult[];
  downloadForeign: LoadResult[];
}

export interface FullDownload {
  bytes: number;
  seconds: number;
  mibPerS: number;
  /** Server RSS growth from just before the download to its peak during it. */
  rssGrowthMb: number;
  serverCpu: number;
  clientCpu: number;
}

export interface ArtifactResult {
  rows: number;
  chunkRows: number;
  /** The file's size as the task view states it (`taskhandle.bytes`). */
  bytes: number;
  /** From SendMessage sent to the completed status's timestamp (same machine clock). */
  writeS: number;
  writeMibPerS: number;
  /** Cores the server used while writing. */
  writeServerCpu: number;
  /** Server RSS: settled before the write, peak per phase, settled at the end. */
  rssMb: {
    before: number;
    writePeak: number;
    /** 1 s after the export completed: what the write left behind. */
    afterWrite: number;
    loadPeak: number;
    downloadPeak: number;
    after: number;
  };
  /** GetTask of a small finished task (an inline 100-row export) and of the large one. */
  small: LoadResult[];
  large: LoadResult[];
  refusals: Refusals;
  downloads: FullDownload[];
  /** `Range: bytes=-1048576` answered 206 with exactly 1 MiB, one request at a time. */
  ranged: { requests: number; p50Ms: number; p99Ms: number };
}

type Loads = Record<'small' | 'large' | keyof Refusals, LoadResult[]>;

/** The linked file the loads are warmed up on before the baseline is read (1.7 MB). */
const WARM_ROWS = 20_000;
const MIB = 2 ** 20;
const noBody = () => '';
const mb = (bytes: number) => bytes / MIB;

/**
 * One export of `rows` rows (1 GiB by default) by one API-key principal, then: GetTask of it against
 * GetTask of a small task, a second principal's GetTask and download of it against the same for a
 * missing id, and whole and ranged downloads, with the server's RSS sampled all along.
 */
export async function largeArtifact(kind: ArtifactKind, o: ArtifactOptions): Promise<ArtifactResult> {
  const { file: keysFile, headers } = writeKeysFile(`artifact-${kind}`, { alice: 'acme', mallory: 'globex' });
  const server = await launch(kind, {
    env: {
      API_KEYS_FILE: keysFile,
      // the export is 1 GiB: over the 100 MiB default, under the 10 GiB stored-bytes quota
      MAX_ARTIFACT_BYTES: String(8 * 2 ** 30),
    },
  });
  try {
    const { alice: asOwner, mallory: asOther } = headers;
    const small = await runExport(server.url, asOwner, { rows: 100, chunkRows: o.chunkRows });
    const missingId = randomUUID();
    type Shape = Pick<LoadOptions, 'body' | 'get' | 'headers' | 'expect'>;
    // every load of a round, aimed at one linked file
    const shapesFor = (file: Export): [keyof Loads, Shape][] => {
      const path = new URL(file.url).pathname;
      return [
        ['small', { body: () => getBody(small.id), headers: asOwner }],
        ['large', { body: () => getBody(file.id), headers: asOwner }],
        ['getMissing', { body: () => getBody(missingId), headers: asOther, expect: 'refusal' }],
        ['getForeign', { body: () => getBody(file.id), headers: asOther, expect: 'refusal' }],
        [
          'downloadMissing',
          { body: noBody, get: path.replaceAll(file.id, missingId), headers: asOther, expect: 'refusal' },
        ],
        ['downloadForeign', { body: noBody, get: path, headers: asOther, expect: 'refusal' }],
      ];
    };
    // The baseline every growth is measured from: the server after the same loads and a download
    // on a linked file of WARM_ROWS rows, then settled. What the loads themselves hold (32
    // connections' buffers, warmed code) is in it; what the 1 GiB file adds is not.
    const medium = await runExport(server.url, asOwner, { rows: WARM_ROWS, chunkRows: o.chunkRows });
    const warm = { durationS: o.load.warmupS, warmupS: 0, retries: 0, quietWaitS: 0 };
    if (o.warmBaseline)
      for (const [, shape] of shapesFor(medium)) await measure(server, { ...o.load, ...warm, ...shape });
    await wholeDownload(server, medium.url, asOwner, medium.bytes);
    await sleep(1000);
    const before = server.rssBytes();

    const writeMeter = new PeakMeter(() => server.rssBytes());
    const cpu0 = server.cpuSeconds();
    const large = await runExport(server.url, asOwner, { rows: o.rows, chunkRows: o.chunkRows });
    const writePeak = writeMeter.stop();
    const writeServerCpu = (server.cpuSeconds() - cpu0) / large.seconds;
    await sleep(1000);
    const afterWrite = server.rssBytes();

    const loads: Loads = {
      small: [],
      large: [],
      getMissing: [],
      getForeign: [],
      downloadMissing: [],
      downloadForeign: [],
    };
    const shapes = shapesFor(large);
    const downloads: FullDownload[] = [];
    const rangedMs: number[] = [];
    let downloadPeak = 0;
    let loadPeak = 0;
    for (let round = 0; round < o.rounds; round++) {
      const loadMeter = new PeakMeter(() => server.rssBytes());
      for (let i = 0; i < shapes.length; i++) {
        const [name, shape] = shapes[(i + round) % shapes.length] as (typeof shapes)[number];
        loads[name].push(await measure(server, { ...o.load, ...shape }));
      }
      loadPeak = Math.max(loadPeak, loadMeter.stop());
      const d = await wholeDownload(server, large.url, asOwner, large.bytes);
      downloads.push(d.result);
      downloadPeak = Math.max(downloadPeak, d.peak);
      for (let n = 0; n < RANGED_REQUESTS; n++) rangedMs.push(await lastMib(large.url, asOwner, large.bytes));
    }
    await sleep(1000);
    return {
      rows: o.rows,
      chunkRows: o.chunkRows,
      bytes: large.bytes,
      writeS: large.seconds,
      writeMibPerS: mb(large.bytes) / large.seconds,
      writeServerCpu,
      rssMb: {
        before: mb(before),
        writePeak: mb(writePeak),
        afterWrite: mb(afterWrite),
        loadPeak: mb(loadPeak),
        downloadPeak: mb(downloadPeak),
        after: mb(server.rssBytes()),
      },
      small: loads.small,
      large: loads.large,
      refusals: {
        getMissing: loads.getMissing,
        getForeign: loads.getForeign,
        downloadMissing: loads.downloadMissing,
        downloadForeign: loads.downloadForeign,
      },
      downloads,
      ranged: { requests: rangedMs.length, p50Ms: percentile(rangedMs, 50), p99Ms: percentile(rangedMs, 99) },
    };
  } finally {
    await server.stop();
  }
}

interface Export {
  id: string;
  /** The linked file part's URL (the small, inline export has none: ''). */
  url: string;
  bytes: number;
  seconds: number;
}

/** Runs an export to its end; the task must complete, and a large one must link its file. */
async function runExport(
  url: string,
  headers: Record<string, string>,
  input: { rows: number; chunkRows: number },
): Promise<Export> {
  const sent = Date.now();
  const reply = await call(url, sendBody({ data: { skill: 'export', input } })(), headers);
  const id = reply.result?.task?.id;
  if (typeof id !== 'string') throw new Error(`SendMessage returned no task: ${JSON.stringify(reply)}`);
  for (;;) {
    const task = (await call(url, getBody(id), headers)).result;
    const state = String(task?.status?.state);
    if (/SUBMITTED|WORKING/.test(state)) {
      await sleep(200);
      continue;
    }
    if (state !== 'TASK_STATE_COMPLETED')
      throw new Error(
        `the export of ${input.rows} rows ended ${state}: ${JSON.stringify(task?.status?.message)}`,
      );
    const part = task.artifacts?.[0]?.parts?.[0];
    const bytes = Number(
      part?.metadata?.['taskhandle.bytes'] ?? Buffer.byteLength(part?.raw ?? '', 'base64'),
    );
    if (input.rows > 1000 && typeof part?.url !== 'string')
      throw new Error(
        `the export of ${input.rows} rows shows no linked file: ${JSON.stringify(part).slice(0, 300)}`,
      );
    return { id, url: part?.url ?? '', bytes, seconds: (Date.parse(task.status.timestamp) - sent) / 1000 };
  }
}

/** The whole file, once, with the server's RSS sampled; every byte must arrive. */
async function wholeDownload(
  server: Awaited<ReturnType<typeof launch>>,
  url: string,
  headers: Record<string, string>,
  bytes: number,
): Promise<{ result: FullDownload; peak: number }> {
  await sleep(500);
  const before = server.rssBytes();
  const meter = new PeakMeter(() => server.rssBytes());
  const cpu0 = server.cpuSeconds();
  const client0 = process.cpuUsage();
  const d: Download = await download(url, headers);
  const peak = meter.stop();
  const client = process.cpuUsage(client0);
  if (d.status !== 200 || d.bytes !== bytes)
    throw new Error(`download of ${url}: ${d.status}, ${d.bytes} of ${bytes} bytes`);
  return {
    peak,
    result: {
      bytes: d.bytes,
      seconds: d.seconds,
      mibPerS: mb(d.bytes) / d.seconds,
      rssGrowthMb: mb(peak - before),
      serverCpu: (server.cpuSeconds() - cpu0) / d.seconds,
      clientCpu: (client.user + client.system) / 1e6 / d.seconds,
    },
  };
}

/** The file's last MiB by `Range`; returns milliseconds. */
async function lastMib(url: string, headers: Record<string, string>, bytes: number): Promise<number> {
  const want = Math.min(MIB, bytes);
  const d = await download(url, { ...headers, Range: `bytes=-${MIB}` });
  const expected = `bytes ${bytes - want}-${bytes - 1}/${bytes}`;
  if (
    d.status !== 206 ||
    d.bytes !== want ||
    d.contentRange !== expected ||
    !d.tail.toString().endsWith('\r\n')
  )
    throw new Error(`Range bytes=-${MIB} of ${url}: ${d.status} ${d.contentRange}, ${d.bytes} bytes`);
  return d.seconds * 1000;
}
