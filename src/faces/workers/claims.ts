import { ownerKey, type Principal } from '../../auth/principal.js';
import type { ClaimedJob } from '../../engine/remote-runs.js';
import { answeredBy, answerValue } from '../../engine/skill-context.js';
import { principalOf } from '../http/problem.js';
import { type Handler, Refused } from '../http/route.js';
import type { WorkersOptions } from './options.js';
import { ClaimBody } from './requests.js';
import { bodyOf, iso, workerName } from './respond.js';

/**
 * `POST /v1/workers/claims`: up to `max` tasks of the skills asked for, at once or within `waitMs`
 * (a long poll that ends early when the worker hangs up or the server stops).
 */
export const claimJobs =
  (o: WorkersOptions): Handler =>
  async (req, res) => {
    const principal = principalOf(res);
    const body = await bodyOf(
      req,
      o,
      ClaimBody,
      '{"skills"?: [string], "max"?: 1-32, "waitMs"?: 0-60000, "worker"?: string}',
    );
    const skills = skillsToClaim(o, principal, body.skills);
    const hungUp = new AbortController();
    res.on('close', () => hungUp.abort());
    const worker = workerName(principal, body.worker);
    const jobs = await o.runs.claim({
      worker,
      holder: ownerKey(principal),
      skills,
      max: body.max,
      waitMs: body.waitMs,
      signal: AbortSignal.any([hungUp.signal, o.shutdown]),
    });
    for (const job of jobs) o.audit('work-claim', principal, job.record.id, { grant: 'worker', worker });
    res.json({ jobs: jobs.map((job) => jobDocument(job, o.leaseMs)) });
  };

/** The skills a claim may take: those asked for (or all), each remote and this worker's to work. */
function skillsToClaim(
  o: WorkersOptions,
  principal: Principal,
  asked: readonly string[] | undefined,
): string[] {
  const remote = o.runs.skills;
  const mayWork = (id: string) => !principal.skills || principal.skills.has(id);
  if (remote.length === 0) {
    throw new Refused(
      404,
      'This server has no remote skills: declare one with defineRemoteSkill in a skills module (docs/workers.md)',
    );
  }
  if (asked === undefined) {
    const mine = remote.filter(mayWork);
    if (mine.length === 0) throw new Refused(403, 'This credential may work none of the remote skills');
    return mine;
  }
  for (const id of asked) {
    if (!remote.includes(id)) {
      const what = o.skills.get(id) ? 'runs in the server, not on workers' : 'is not a skill of this server';
      throw new Refused(400, `Skill "${id}" ${what}; remote skills: ${remote.join(', ')}`);
    }
    if (!mayWork(id)) throw new Refused(403, `This credential may not work the skill "${id}"`);
  }
  return [...new Set(asked)].sort();
}

/** A claimed task as the worker gets it (docs/workers.md, "Claim"). */
function jobDocument(job: ClaimedJob, leaseMs: number) {
  const { record, fromCaller } = job;
  return {
    taskId: record.id,
    contextId: record.contextId,
    skill: record.skill,
    input: record.input,
    message: fromCaller[0],
    answers: fromCaller.slice(1).map((message) => ({
      value: answerValue(message),
      from: answeredBy(message, record.owner),
      message,
    })),
    attempt: record.attempts,
    interrupted: job.interrupted,
    traceparent: record.trace?.traceparent,
    lease: {
      token: job.leaseToken,
      expiresAt: iso(job.leaseExpiresAt),
      heartbeatMs: Math.floor(leaseMs / 3),
    },
  };
}
