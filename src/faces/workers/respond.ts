import type { Request, Response } from 'express';
import type { z } from 'zod';
import { approverNameOf, type Principal } from '../../auth/principal.js';
import { TooManyClaims } from '../../engine/claim-desk.js';
import { ArtifactRefused, LeaseLost } from '../../engine/remote-runs.js';
import { jsonBody, parsed } from '../http/json-body.js';
import { principalOf } from '../http/problem.js';
import { type Handler, Refused, route } from '../http/route.js';
import type { WorkersOptions } from './options.js';

const TOKEN = /^[A-Za-z0-9-]{1,100}$/;

/**
 * A worker route: a lost lease is 409 (`reason: "lease-lost"`: stop working on the task), an
 * artifact the task cannot keep 413 (`reason: "artifact-refused"`: the task failed), and the rest
 * as every problem-document face answers.
 */
export const workerRoute = (handler: Handler): Handler =>
  route(async (req, res) => {
    try {
      await handler(req, res);
    } catch (err) {
      if (err instanceof LeaseLost) throw new Refused(409, err.message, { reason: 'lease-lost' });
      if (err instanceof ArtifactRefused) throw new Refused(413, err.message, { reason: 'artifact-refused' });
      if (err instanceof TooManyClaims) {
        res.set('Retry-After', '1');
        throw new Refused(429, err.message, { reason: 'too-many-claims' });
      }
      throw err;
    }
  });

/** The JSON body, as `schema` takes it; a refusal naming the field and what to send otherwise. */
export async function bodyOf<S extends z.ZodType>(
  req: Request,
  o: WorkersOptions,
  schema: S,
  shape: string,
): Promise<z.output<S>> {
  const raw = req.headers['content-length'] === '0' ? {} : await jsonBody(req, o);
  return parsed(schema, raw, `Send ${shape}`);
}

/** The task and lease token a job write names: the path's id and the `Lease-Token` header. */
export function leaseOf(req: Request): { taskId: string; token: string } {
  const token = req.get('Lease-Token');
  if (token === undefined || !TOKEN.test(token)) {
    throw new Refused(400, 'Send the lease token your claim gave (lease.token) in the Lease-Token header');
  }
  return { taskId: String(req.params.id), token };
}

/** The name a worker's leases and audit lines carry: the name it gave, and whose credential it is. */
export function workerName(principal: Principal, given: string | undefined): string {
  return `${given ?? 'worker'} (${approverNameOf(principal) ?? 'local'})`;
}

/** Audits a worker's action on a task. */
export function audited(
  o: WorkersOptions,
  res: Response,
  action: Parameters<WorkersOptions['audit']>[0],
  taskId: string,
): void {
  const principal = principalOf(res);
  o.audit(action, principal, taskId, { grant: 'worker', worker: workerName(principal, undefined) });
}

/** An epoch time as callers read times (ISO 8601). */
export const iso = (ms: number): string => new Date(ms).toISOString();
