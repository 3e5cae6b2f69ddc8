import type { Response } from 'express';
import type { LeaseState } from '../../engine/remote-runs.js';
import type { Handler } from '../http/route.js';
import type { WorkersOptions } from './options.js';
import { ArtifactBody, AskBody, CompleteBody, FailBody, ProgressBody, StatusBody } from './requests.js';
import { audited, bodyOf, iso, leaseOf } from './respond.js';

/**
 * The writes of a worker to a task it holds (docs/workers.md): each names the task in its path and
 * carries the claim's lease token; one that no longer holds is 409 and writes nothing.
 */

/** Where the task stands after the write: its state, whether its owner asked to cancel, the lease. */
function sendLease(res: Response, lease: LeaseState, extra: Record<string, unknown> = {}): void {
  const { leaseExpiresAt, ...rest } = lease;
  res.json({
    ...extra,
    ...rest,
    ...(leaseExpiresAt === undefined ? {} : { leaseExpiresAt: iso(leaseExpiresAt) }),
  });
}

/** `POST .../heartbeat`: the lease extended, or (its owner canceled it) the task ended canceled. */
export const heartbeat =
  (o: WorkersOptions): Handler =>
  async (req, res) => {
    const { taskId, token } = leaseOf(req);
    sendLease(res, await o.runs.heartbeat(taskId, token));
  };

export const progress =
  (o: WorkersOptions): Handler =>
  async (req, res) => {
    const { taskId, token } = leaseOf(req);
    const body = await bodyOf(req, o, ProgressBody, '{"percent"?: 0-100, "message"?: string}');
    sendLease(res, await o.runs.progress(taskId, token, body));
  };

export const status =
  (o: WorkersOptions): Handler =>
  async (req, res) => {
    const { taskId, token } = leaseOf(req);
    const { text } = await bodyOf(req, o, StatusBody, '{"text": string}');
    sendLease(res, await o.runs.say(taskId, token, text));
  };

export const artifact =
  (o: WorkersOptions): Handler =>
  async (req, res) => {
    const { taskId, token } = leaseOf(req);
    const body = await bodyOf(
      req,
      o,
      ArtifactBody,
      '{"artifactId"?, "name"?, "parts": [Part], "append"?, "lastChunk"?}',
    );
    const { artifactId, ...lease } = await o.runs.artifact(taskId, token, body);
    sendLease(res, lease, { artifactId });
  };

export const ask =
  (o: WorkersOptions): Handler =>
  async (req, res) => {
    const { taskId, token } = leaseOf(req);
    const body = await bodyOf(
      req,
      o,
      AskBody,
      '{"prompt": string, "schema"?: object, "approvers"?: [string], "deadlineMs"?: integer}',
    );
    const state = await o.runs.ask(taskId, token, body);
    audited(o, res, 'work-ask', taskId);
    res.json({ taskId, state });
  };

export const complete =
  (o: WorkersOptions): Handler =>
  async (req, res) => {
    const { taskId, token } = leaseOf(req);
    const body = await bodyOf(
      req,
      o,
      CompleteBody,
      '{"message"?: string, "state"?: "completed" | "rejected", "artifacts"?: [Artifact]}',
    );
    const state = await o.runs.complete(taskId, token, body);
    audited(o, res, 'work-complete', taskId);
    res.json({ taskId, state });
  };

export const fail =
  (o: WorkersOptions): Handler =>
  async (req, res) => {
    const { taskId, token } = leaseOf(req);
    const body = await bodyOf(
      req,
      o,
      FailBody,
      '{"message": string, "code"?: string, "retryable"?: boolean}',
    );
    const { state, retryAt } = await o.runs.fail(taskId, token, body);
    audited(o, res, 'work-fail', taskId);
    res.json({ taskId, state, ...(retryAt === undefined ? {} : { retryAt: iso(retryAt) }) });
  };

export const release =
  (o: WorkersOptions): Handler =>
  async (req, res) => {
    const { taskId, token } = leaseOf(req);
    const lease = await o.runs.release(taskId, token);
    audited(o, res, 'work-release', taskId);
    sendLease(res, lease);
  };
