import { artifactLoads } from './artifact-report.js';
import { REFUSED } from './flood-bounds.js';
import { measuredScenarios, type Results } from './results.js';
import { ARTIFACT_KINDS } from './scenarios/artifact.js';
import { FLOOD_PHASES, type FloodResult } from './scenarios/flood.js';
import { WORKERS_KINDS } from './scenarios/workers.js';
import { SERVER_LABELS, type ServerKind } from './servers/kinds.js';

/**
 * Smoke runs assert no timing, only that every scenario produced answers, on every server kind it
 * was to run on (the PostgreSQL ones too, where PostgreSQL answers). Sets a failing exit code if not.
 */
export function checkEverythingRan(r: Results, loadKinds: readonly ServerKind[]): void {
  const loads = [
    ...Object.values(r.create).flat(),
    ...Object.values(r.poll).flat(),
    ...r.mcp.create,
    ...r.mcp.get,
    ...r.retained.flatMap((x) => [...x.poll, ...x.create]),
    ...artifactLoads(r),
  ];
  const broken = [
    ...loads.filter((l) => l.requests === 0).map(() => 'a load measurement got no valid answer'),
    ...(['create', 'poll'] as const).flatMap((s) =>
      r.options.scenarios.has(s)
        ? loadKinds.filter((k) => !r[s][k]?.length).map((k) => `${s} has no result for ${SERVER_LABELS[k]}`)
        : [],
    ),
    ...(r.options.scenarios.has('artifact')
      ? ARTIFACT_KINDS.filter((k) => loadKinds.includes(k) && !r.artifact[k]).map(
          (k) => `the large artifact has no result for ${SERVER_LABELS[k]}`,
        )
      : []),
    ...Object.values(r.fanout)
      .flat()
      .filter((f) => f.received === 0)
      .map(() => 'a fan-out run delivered no transition'),
    // at these sizes every notification must arrive, or delivery is broken
    ...Object.values(r.push)
      .flat()
      .filter((p) => p.delivered < p.expected)
      .map((p) => `a push run got ${p.delivered} of ${p.expected} notifications`),
    ...Object.values(r.e2e)
      .flat()
      .filter((e) => e.completed < e.jobs)
      .map((e) => `an end-to-end run completed ${e.completed} of ${e.jobs} jobs`),
    // every idle claim must still wait when the wait is measured, and every create reach one of them
    ...Object.values(r.workers)
      .flat()
      .filter((w) => w.waiting < w.claims)
      .map((w) => `an idle-workers run had ${w.waiting} of ${w.claims} claims waiting`),
    ...(r.workers.taskhandle ?? [])
      .filter((w) => (w.createToClaim?.n ?? 0) < r.options.idleCreates)
      .map(
        (w) =>
          `an idle-workers run saw ${w.createToClaim?.n ?? 0} of ${r.options.idleCreates} creates claimed`,
      ),
    ...(r.options.scenarios.has('workers')
      ? WORKERS_KINDS.filter((k) => !r.workers[k]?.length).map(
          (k) => `idle workers has no result for ${SERVER_LABELS[k]}`,
        )
      : []),
    ...(r.flood ? floodProblems(r.flood) : []),
  ];
  const expected = r.options.scenarios.size;
  const ran = measuredScenarios(r).length;
  if (ran < expected) broken.push(`only ${ran} of ${expected} scenarios produced results`);
  broken.push(...r.errors.map((e) => e.message));
  if (broken.length) {
    console.error(`smoke run failed:\n  ${[...new Set(broken)].join('\n  ')}`);
    process.exitCode = 1;
  }
}

/** A flood run must have taken every bound, been refused by each, and left the quiet tenant answered. */
function floodProblems(f: FloodResult): string[] {
  const b = f.bounds;
  return f.rounds.flatMap((x, i) => {
    const round = `flood round ${i + 1}`;
    const phases = FLOOD_PHASES.map((name) => [name, x[name]] as const);
    const built = phases.flatMap(([name, p]) => (p.flood ? [[name, p.flood.built] as const] : []));
    const retried = x.flooded.flood?.retried;
    return [
      ...phases
        .filter(([, p]) => !p.create.n || !p.poll.n)
        .map(([name]) => `${round}, ${name}: the quiet tenant's creates or polls got no answer`),
      ...phases
        .filter(([, p]) => p.failures > 0)
        .map(([name, p]) => `${round}, ${name}: ${p.failures} quiet requests failed (${p.firstFailure})`),
      ...(built.length < 2 ? [`${round}: a flood phase has no flooder report`] : []),
      ...built
        .filter(
          ([, t]) =>
            t.tasks !== b.maxActiveTasks ||
            t.streams !== b.maxStreams ||
            t.pushConfigs !== t.pushTasks * b.maxPushConfigs,
        )
        .map(
          ([name, t]) =>
            `${round}, ${name}: the flooder took ${t.tasks} tasks, ${t.streams} streams, ${t.pushConfigs} webhooks on ${t.pushTasks} tasks`,
        ),
      ...(
        [
          ['creates', retried?.creates, REFUSED.tasks],
          ['streams', retried?.streams, REFUSED.streams],
          ['webhook configs', retried?.pushConfigs, REFUSED.pushConfigs],
        ] as const
      )
        .filter(([, outcomes, code]) => !outcomes?.[code])
        .map(([what]) => `${round}: no retry of the flooder's ${what} was refused`),
    ];
  });
}
