import { defineRemoteSkill } from 'taskhandle';
import { z } from 'zod';

export const resize = defineRemoteSkill({
  id: 'resize',
  description: 'Resizes an image',
  input: z.strictObject({ width: z.number().int().positive() }),
  pollIntervalMs: 1000,
  ttlMs: 3_600_000,
  onInterrupt: 'rerun', // a worker that dies loses its lease: the next worker runs it again
});
