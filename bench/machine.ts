import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg, release, totalmem } from 'node:os';

export interface Machine {
  cpu: string;
  cores: number;
  ramGb: number;
  node: string;
  kernel: string;
  date: string;
  commit: string;
  loadAtStart: string;
}

/** What the run ran on, for the report: numbers only mean something next to these. */
export function describeMachine(): Machine {
  const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['describe', '--always', '--dirty'], { encoding: 'utf8' }).trim();
  } catch {
    // not a git checkout
  }
  return {
    cpu: /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? 'unknown',
    cores: availableParallelism(),
    ramGb: totalmem() / 2 ** 30,
    node: process.version,
    kernel: `Linux ${release()}`,
    date: new Date().toISOString(),
    commit,
    loadAtStart: loadavg()
      .map((l) => l.toFixed(2))
      .join(' / '),
  };
}
