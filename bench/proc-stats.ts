import { readFileSync } from 'node:fs';

/** Per-process figures from /proc (Linux): what one server process holds and spends. */

const TICKS_PER_SECOND = 100; // USER_HZ, 100 on every Linux this runs on

/** Resident set size in bytes, or NaN once the process is gone. */
export function rssBytes(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match?.[1] ? Number(match[1]) * 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** User + system CPU seconds the process has used so far. */
export function cpuSeconds(pid: number): number {
  const t = cpuTimes(pid);
  return t.user + t.system;
}

/** CPU seconds of a process (all its threads), in user space and in the kernel on its behalf. */
export function cpuTimes(pid: number): { user: number; system: number } {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { user: Number(fields[11]) / TICKS_PER_SECOND, system: Number(fields[12]) / TICKS_PER_SECOND };
  } catch {
    return { user: Number.NaN, system: Number.NaN };
  }
}

/** CPU seconds the whole machine has been busy (all cores, all processes) since boot. */
export function machineBusySeconds(): number {
  const fields =
    readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]?.trim().split(/\s+/).slice(1).map(Number) ?? [];
  // user nice system idle iowait irq softirq steal: everything but idle and iowait is busy
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
  return (user + nice + system + irq + softirq + steal) / TICKS_PER_SECOND;
}

/**
 * On a shared machine, waits (at most `maxS` seconds) until the machine has been nearly idle for
 * one second, so that a measurement does not start in the middle of someone else's burst.
 * The server under test (`serverCpuSeconds`: all its processes) does not count. Returns the cores
 * busy in the last second sampled.
 */
export async function waitForQuiet(
  maxS: number,
  serverCpuSeconds: () => number,
  idleCores: number,
): Promise<number> {
  const deadline = performance.now() + maxS * 1000;
  for (;;) {
    const before = machineBusySeconds() - serverCpuSeconds();
    await new Promise((r) => setTimeout(r, 1000));
    const busy = machineBusySeconds() - serverCpuSeconds() - before;
    if (busy <= idleCores || performance.now() >= deadline) return busy;
  }
}
