import { setTimeout as sleep } from 'node:timers/promises';
import { defineSkill } from 'taskhandle';
import { z } from 'zod';

export const render = defineSkill({
  id: 'render',
  description: 'Renders the frames of a scene',
  input: z.strictObject({ frames: z.number().int().min(1).max(10_000) }),
  pollIntervalMs: 1000,
  ttlMs: 86_400_000,
  onInterrupt: 'rerun',
  // #region concurrency
  concurrency: 2, // at most two renders at once, on every instance together; the others wait queued
  // #endregion concurrency
  async run(ctx) {
    const { frames } = ctx.input;
    for (let frame = 1; frame <= frames; frame++) {
      await sleep(100, undefined, { signal: ctx.signal }); // a frame's work
      await ctx.progress({ percent: Math.round((100 * frame) / frames), message: `frame ${frame}` });
    }
    return { message: `Rendered ${frames} frames` };
  },
});
