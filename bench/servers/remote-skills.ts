import { z } from 'zod';
import { defineRemoteSkill } from '../../src/index.js';
import { REMOTE_SKILL } from './remote.js';

/**
 * The benchmarks' remote skill (SKILLS=dist/bench/servers/remote-skills.js): worked by
 * remote-worker.ts, whose handler completes each job at once. Its settings are those of the
 * built-in `export` skill the in-process end-to-end kinds run, so that the two differ only in where
 * the work runs.
 */
export const benchRemote = defineRemoteSkill({
  id: REMOTE_SKILL,
  description: 'Completes at once, on a remote worker (the benchmarks)',
  input: z.looseObject({}),
  pollIntervalMs: 2000,
  ttlMs: 7 * 86_400_000,
  onInterrupt: 'rerun',
});
