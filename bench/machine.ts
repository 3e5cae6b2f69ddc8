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
  /** The checked-out commit, and the top-level folders with uncommitted changes, if any. */
  commit: string;
  loadAtStart: string;
  /** The PostgreSQL server and its commit settings, or why it was not used (see probePostgres). */
  postgres?: { description: string; settings: Record<string, string> };
}

/** What the run ran on, for the report: numbers only mean something next to these. */
export function describeMachine(): Machine {
  const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const changed = execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], {
      encoding: 'utf8',
    })
      .split('\n')
      .filter(Boolean)
      .map((line) => line.slice(3).replace(/^"|"$/g, '').split(' -> ').at(-1) ?? '')
      .map((path) => (path.includes('/') ? `${path.split('/')[0]}/` : path));
    // what was measured is the committed server unless src/ is listed here
    if (changed.length) commit += ` + uncommitted ${[...new Set(changed)].sort().join(', ')}`;
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
