import { type BuildUp, FLOOD_JOB_S, type Outcomes, REFUSED, type Retried } from './flood-bounds.js';
import { ms, table } from './report.js';
import type { Results } from './results.js';
import {
  DEFAULT_BOUNDS,
  FLOOD_PHASES,
  type FloodPhase,
  type FloodPhaseName,
  type FloodResult,
  type Latency,
} from './scenarios/flood.js';
import { median } from './stats.js';

/** The flood scenario's target (issue 29): the quiet tenant's latency beside the flood, over its latency alone. */
export const FLOOD_TARGET = 2;

/** Medians over rounds of each round's p50 and p99, and the requests answered in all rounds. */
interface Medians {
  n: number;
  p50: number;
  p99: number;
}

/** The quiet tenant's create and poll per phase. */
export interface FloodSummary {
  create: Record<FloodPhaseName, Medians>;
  poll: Record<FloodPhaseName, Medians>;
  /** The flooder's retries while the quiet tenant was measured beside them, summed over rounds. */
  retried: Pick<Retried, 'creates' | 'streams' | 'pushConfigs' | 'seconds'>;
}

export function summariseFlood(f: FloodResult): FloodSummary {
  const medians = (pick: (p: FloodPhase) => Latency) =>
    Object.fromEntries(
      FLOOD_PHASES.map((phase) => {
        const rounds = f.rounds.map((r) => pick(r[phase]));
        return [
          phase,
          {
            n: rounds.reduce((a, x) => a + x.n, 0),
            p50: median(rounds.map((x) => x.p50Ms)),
            p99: median(rounds.map((x) => x.p99Ms)),
          },
        ];
      }),
    ) as Record<FloodPhaseName, Medians>;
  const retries = floodsOf(f, 'flooded').map((x) => x.retried);
  const sum = (pick: (r: Retried) => Outcomes): Outcomes => {
    const out: Outcomes = {};
    for (const r of retries) for (const [k, n] of Object.entries(pick(r))) out[k] = (out[k] ?? 0) + n;
    return out;
  };
  return {
    create: medians((p) => p.create),
    poll: medians((p) => p.poll),
    retried: {
      creates: sum((r) => r.creates),
      streams: sum((r) => r.streams),
      pushConfigs: sum((r) => r.pushConfigs),
      seconds: retries.reduce((s, r) => s + r.seconds, 0),
    },
  };
}

/** What the flooder took and got in one phase, round by round. */
const floodsOf = (f: FloodResult, phase: FloodPhaseName): { built: BuildUp; retried: Retried }[] =>
  f.rounds.flatMap((r) => (r[phase].flood ? [r[phase].flood] : []));

/** `1.31×`: latency beside the flood over latency alone. */
const times = (beside: number, alone: number): string =>
  alone > 0 && Number.isFinite(beside) ? `${(beside / alone).toFixed(2)}×` : '-';

/** `1.31× (met)`: the ratio, and whether it meets the target. */
export const ratio = (beside: number, alone: number): string =>
  times(beside, alone) === '-'
    ? '-'
    : `${times(beside, alone)} (${beside / alone <= FLOOD_TARGET ? 'met' : '**NOT MET**'})`;

const n = (x: number) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en') : '-');

/** The "Flood by one key (issue 29)" section of bench/BENCHMARKS.md. */
export function floodSection(r: Results): string {
  const f = r.flood;
  if (!f?.rounds.length) return 'Not measured.\n';
  const s = summariseFlood(f);
  const o = f.options;
  const b = f.bounds;
  const latency = table(
    [
      "the quiet tenant's",
      'alone ms',
      'beside the flood holding its bounds ms',
      '×',
      'beside the flood holding and retrying ms',
      `× (target <= ${FLOOD_TARGET}×)`,
    ],
    (['create', 'poll'] as const).flatMap((what) =>
      (['p50', 'p99'] as const).map((p) => {
        const x = s[what];
        return [
          `${what === 'create' ? 'create (SendMessage)' : 'poll (GetTask)'} ${p}`,
          ms(x.quiet[p]),
          ms(x.held[p]),
          times(x.held[p], x.quiet[p]),
          ms(x.flooded[p]),
          ratio(x.flooded[p], x.quiet[p]),
        ];
      }),
    ),
  );
  const flooded = floodsOf(f, 'flooded');
  const took = (pick: (x: BuildUp) => number) => n(median(flooded.map((x) => pick(x.built))));
  const perS = (outcomes: Outcomes) =>
    `${n(Object.values(outcomes).reduce((a, x) => a + x, 0) / s.retried.seconds)}/s`;
  const others = (outcomes: Outcomes, code: string) =>
    Object.entries(outcomes)
      .filter(([k]) => k !== code)
      .map(([k, x]) => `${n(x)} ${k}`)
      .join(', ') || 'none';
  const bound = (setting: string, held: string, outcomes: Outcomes, code: string) => [
    setting,
    held,
    `${n(outcomes[code] ?? 0)} (${code})`,
    others(outcomes, code),
    perS(outcomes),
  ];
  const bounds = table(
    [
      'bound',
      'the flooder took (median of rounds)',
      'its retries refused (all rounds)',
      'other answers',
      'retries answered',
    ],
    [
      bound(
        `MAX_ACTIVE_TASKS=${n(b.maxActiveTasks)}`,
        `${took((x) => x.tasks)} tasks`,
        s.retried.creates,
        REFUSED.tasks,
      ),
      bound(
        `MAX_STREAMS=${n(b.maxStreams)}`,
        `${took((x) => x.streams)} SSE streams`,
        s.retried.streams,
        REFUSED.streams,
      ),
      bound(
        `MAX_PUSH_CONFIGS=${n(b.maxPushConfigs)}`,
        `${took((x) => x.pushConfigs)} webhooks on ${took((x) => x.pushTasks)} tasks`,
        s.retried.pushConfigs,
        REFUSED.pushConfigs,
      ),
    ],
  );
  const med = (phase: FloodPhaseName, pick: (p: FloodPhase) => number) =>
    median(f.rounds.map((x) => pick(x[phase])));
  const row = (what: string, pick: (p: FloodPhase) => number, show: (x: number) => string) => [
    what,
    ...FLOOD_PHASES.map((phase) => show(med(phase, pick))),
  ];
  const carried = (phase: FloodPhaseName, pick: (x: Retried) => number) =>
    n(median(floodsOf(f, phase).map((x) => pick(x.retried) / x.retried.seconds)));
  const cores = (x: number) => x.toFixed(2);
  const machine = table(
    ['while the quiet tenant was measured (median of rounds)', 'alone', 'holding', 'holding and retrying'],
    [
      row('server CPU (cores)', (p) => p.serverCpu, cores),
      row("the flooder's process CPU", (p) => p.flooderCpu, cores),
      row("the quiet tenant's (this) process CPU", (p) => p.clientCpu, cores),
      row('other processes CPU', (p) => p.otherCpu, cores),
      row('server RSS at the end (MB)', (p) => p.serverRssMb, n),
      [
        'webhook POSTs received/s',
        '0',
        carried('held', (x) => x.webhookPosts),
        carried('flooded', (x) => x.webhookPosts),
      ],
      [
        'stream events received/s',
        '0',
        carried('held', (x) => x.streamEvents),
        carried('flooded', (x) => x.streamEvents),
      ],
      [
        'the flooder took its bounds in (s)',
        '-',
        ...(['held', 'flooded'] as const).map((phase) =>
          median(floodsOf(f, phase).map((x) => x.built.seconds)).toFixed(1),
        ),
      ],
      [
        'its requests cut off by a connection error meanwhile, sent again (all rounds)',
        '-',
        ...(['held', 'flooded'] as const).map((phase) =>
          n(floodsOf(f, phase).reduce((a, x) => a + x.built.connectionErrors, 0)),
        ),
      ],
    ],
  );
  // on a shared machine the rounds differ most by what else ran: each round's ratios beside it
  const perRound = table(
    [
      'round',
      'other processes CPU: alone / holding / retrying',
      'create p50 ×',
      'create p99 ×',
      'poll p50 ×',
      'poll p99 ×',
    ],
    f.rounds.map((x, i) => [
      String(i + 1),
      FLOOD_PHASES.map((phase) => cores(x[phase].otherCpu)).join(' / '),
      ...(['create', 'poll'] as const).flatMap((what) =>
        (['p50Ms', 'p99Ms'] as const).map((p) => times(x.flooded[what][p], x.quiet[what][p])),
      ),
    ]),
  );
  const failures = f.rounds
    .flatMap((x) => FLOOD_PHASES.map((phase) => x[phase]))
    .filter((p) => p.failures > 0);
  const setMaxActive =
    b.maxActiveTasks === DEFAULT_BOUNDS.maxActiveTasks
      ? ''
      : ` This run set \`MAX_ACTIVE_TASKS=${n(b.maxActiveTasks)}\` (default ${n(DEFAULT_BOUNDS.maxActiveTasks)}) on every server.`;
  return `One API key (tenant flooder) takes every bound taskhandle sets a principal, at the server's defaults,
all at once, while another key (tenant quiet) creates and polls at a light, steady pace: ${o.perS} non-blocking
\`SendMessage\` (an hour-long \`sleep\` job each) and ${o.perS} \`GetTask\` (round-robin over ${n(o.pollTasks)} of its own
hour-long tasks, made first) a second, each request timed on its own from this process, open loop (each
sent at its time, whatever the earlier ones take). Per round, three fresh servers (taskhandle on SQLite,
127.0.0.1, \`RUNNER_CONCURRENCY\` 16) with the same two keys and bounds: the quiet tenant alone on one (the
quiet figure); beside the flooder holding every bound; beside the flooder holding every bound and
asking for more (the issue's case: its target applies to this one), in an order that rotates by round;
${o.warmupS} s unmeasured, then ${o.durationS} s measured (${n(o.perS * o.durationS)} creates and as many polls); ${f.rounds.length} round(s), the table shows the
median over rounds of each round's p50 and p99.${setMaxActive}

The flooder is a process of its own (bench/flooder.ts), so that its work does not delay the timed
requests. Before the quiet tenant starts it takes: \`sleep\` jobs of ${FLOOD_JOB_S} s, 32 creates in flight, until
\`MAX_ACTIVE_TASKS\` refuses one (its first 16 hold every runner slot; the skill reports progress in whole
percents, so each of them has an event every ${FLOOD_JOB_S / 100} s); on its first ${n(o.pushTasks)} tasks, webhooks that hear every
event (\`#taskhandle-events=all\`) at a receiver of its own on 127.0.0.1 (answers 200), until
\`MAX_PUSH_CONFIGS\` refuses one on each (each running task's progress then sets off ${b.maxPushConfigs} POSTs);
\`SubscribeToTask\` streams on its first 16 tasks until \`MAX_STREAMS\` refuses one. Retrying, it then keeps
asking for more of each while the quiet tenant is measured: ${o.retryInFlight} create, ${o.retryInFlight} stream and ${o.retryInFlight} webhook config in
flight, each sent as soon as the last is refused. \`RATE_LIMIT_PER_S\` is off, its default: nothing slows
the retries but the server's answers.

${latency}

${bounds}

${machine}

Round by round, the quiet tenant's latency beside the retrying flood over its latency alone:

${perRound}
${failures.length ? `\nFailed quiet requests: ${failures.map((p) => `${p.failures} (${p.firstFailure})`).join('; ')}.\n` : ''}`;
}
