import { setTimeout as sleep } from 'node:timers/promises';
import { defineSkill } from 'taskhandle';

export const countdown = defineSkill({
  id: 'countdown',
  description: 'Counts down, one step a second',
  // #region input
  input: {
    type: 'object',
    properties: { from: { type: 'integer', minimum: 1, maximum: 600, default: 5 } },
    additionalProperties: false,
  },
  // #endregion input
  pollIntervalMs: 1000,
  ttlMs: 3_600_000,
  onInterrupt: 'rerun',
  async run(ctx) {
    const { from } = ctx.input;
    for (let n = from - 1; n >= 0; n--) await sleep(1000, undefined, { signal: ctx.signal });
    return { message: `Counted down from ${from}` };
  },
});
