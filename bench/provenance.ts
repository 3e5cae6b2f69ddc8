import { SCENARIOS, type Scenario } from './options.js';
import { table } from './report.js';
import { type Results, type RunInfo, runOf } from './results.js';

/** Which run each section of a report comes from, when a run with --only kept an earlier run's. */

export interface Run {
  info: RunInfo;
  sections: string[];
}

const SECTION_NAMES: Record<Scenario, string> = {
  create: 'create',
  poll: 'poll',
  mcp: 'MCP beside A2A',
  fanout: 'fan-out',
  retained: 'retained',
  push: 'push delivery',
  e2e: 'end to end beside pg-boss and graphile-worker',
  timeline: "one job's life",
  artifact: 'large artifact',
  fairness: 'fairness',
  flood: 'flood by one key',
  workers: 'idle workers',
};

/** The runs behind a report, this one first, each with the sections it made. */
export function runsOf(r: Results): Run[] {
  const runs: Run[] = r.runs.map((info) => ({ info, sections: [] }));
  if (!runs.length)
    runs.push({ info: { machine: r.machine, options: r.options, elapsedS: r.elapsedS }, sections: [] });
  for (const s of SCENARIOS) {
    const i = r.sections[s];
    if (i !== undefined) runs[i]?.sections.push(SECTION_NAMES[s]);
  }
  for (const [key, i] of Object.entries(r.sections))
    if (key.startsWith('profile ') && !runs[i]?.sections.includes('CPU profiles'))
      runs[i]?.sections.push('CPU profiles');
  return runs;
}

export const commandOf = (info: RunInfo): string =>
  `npm run bench${info.options.argv.length ? ` -- ${info.options.argv.join(' ')}` : ''}`;

/** The runs, one row each: when, at which commit, how, and which sections of this report they made. */
export function runsTable(runs: readonly Run[]): string {
  return table(
    ['run (start, UTC)', 'commit', 'command', 'took', 'rounds', 'per measurement', 'sections in this report'],
    runs.map(({ info, sections }) => [
      info.machine.date.replace('T', ' ').replace(/\.\d+Z$/, ''),
      info.machine.commit,
      `\`${commandOf(info)}\``,
      `${Math.round(info.elapsedS / 60)} min`,
      String(info.options.rounds),
      `${info.options.warmupS} s warm-up + ${info.options.durationS} s`,
      sections.join(', ') || '-',
    ]),
  );
}

/** One line under a section's heading naming its run, when the report mixes runs; else nothing. */
export function fromLine(r: Results, runs: readonly Run[], section: string): string {
  const info = runOf(r, section);
  if (runs.length < 2 || !info) return '';
  const when = info.machine.date.replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
  const which = r.sections[section] === 0 ? 'this run' : 'an earlier run (kept from its saved results)';
  return `_Numbers from ${which}, started ${when} at commit ${info.machine.commit}._\n\n`;
}
