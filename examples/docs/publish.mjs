import { defineSkill, JobError } from 'taskhandle';
import { z } from 'zod';

const REGISTRY = process.env.REGISTRY_URL ?? 'https://registry.example';

export const publish = defineSkill({
  id: 'publish',
  description: 'Publishes a release to the registry, again later while the registry is unavailable',
  input: z.strictObject({ name: z.string().min(1), version: z.string().min(1) }),
  pollIntervalMs: 2000,
  ttlMs: 86_400_000,
  onInterrupt: 'rerun', // the registry takes the same version twice as once
  // #region retry
  retry: { attempts: 4, backoff: { initialMs: 1000, maxMs: 60_000, jitter: 0.2 }, retryOn: ['TimeoutError'] },
  // #endregion retry
  async run(ctx) {
    const { name, version } = ctx.input;
    const res = await fetch(`${REGISTRY}/${name}/${version}`, {
      method: 'PUT',
      // A cancel stops it; a registry that does not answer within 30 s is tried again (retryOn).
      signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(30_000)]),
    });
    if (res.status === 503) {
      // #region transient
      throw new JobError('the registry answered 503', 'upstream', { transient: true });
      // #endregion transient
    }
    if (!res.ok) throw new JobError(`the registry refused ${name}@${version}: ${res.status}`);
    return { message: `Published ${name}@${version}` };
  },
});
