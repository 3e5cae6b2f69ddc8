// skills/resize.mjs, loaded with SKILLS=./skills/resize.mjs
import { defineRemoteSkill } from 'taskhandle';
import { z } from 'zod';

export const resize = defineRemoteSkill({
  id: 'resize',
  description: 'Resizes an image',
  input: z.object({ url: z.string().url(), width: z.number().int().positive() }),
  pollIntervalMs: 2000,
  ttlMs: 24 * 3_600_000,
  onInterrupt: 'rerun',
});
