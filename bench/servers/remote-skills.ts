import { defineRemoteSkill, defineSkill } from 'taskhandle';
import { z } from 'zod';
import { LOCAL_SKILL, REMOTE_SKILL } from './remote.js';

const common = {
  input: z.looseObject({}),
  pollIntervalMs: 2000,
  ttlMs: 7 * 86_400_000,
  onInterrupt: 'rerun',
} as const;

/**
 * The benchmarks' remote skill (SKILLS=bench/dist/servers/remote-skills.js): worked by
 * remote-worker.ts, whose handler completes each job at once. Poll interval, TTL and interrupt
 * policy as the built-in `export` skill's.
 */
export const benchRemote = defineRemoteSkill({
  id: REMOTE_SKILL,
  description: 'Completes at once, on a remote worker (the benchmarks)',
  ...common,
});

/**
 * Its in-process twin: the same job run by the server's runner, completing at once with the same
 * message, so that an end-to-end row of each differs only in where the job runs.
 */
export const benchLocal = defineSkill({
  id: LOCAL_SKILL,
  description: 'Completes at once, in the server (the benchmarks)',
  ...common,
  async run() {
    return { message: 'done' };
  },
});
