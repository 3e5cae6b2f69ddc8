import { preflightedJsonBody } from '../http/json-body.js';
import { principalOf } from '../http/problem.js';
import { type Handler, Refused } from '../http/route.js';
import { grantOf } from './access.js';
import type { ConsoleOptions } from './options.js';

/**
 * An operator action: its body (`{}`) read within the limits and not used (the path says it all),
 * under the JSON Content-Type that keeps another site's page from sending it (preflightedJsonBody).
 */
export const operatorAction =
  (o: ConsoleOptions, handler: Handler): Handler =>
  async (req, res) => {
    // Read and dropped; a refused body is answered by route (bodyProblem).
    await preflightedJsonBody(req, o);
    await handler(req, res);
  };

/** `POST /api/tasks/:id/cancel`: the task canceled for its owner, audited. */
export const cancelTask =
  (o: ConsoleOptions): Handler =>
  async (req, res) => {
    const grant = grantOf(res);
    const id = String(req.params.id);
    const view = await o.engine.operatorCancel(grant, id);
    o.audit('cancel', principalOf(res), id, {
      grant: 'operator',
      operator: grant.operator,
      owner: view.record.owner,
    });
    res.json({ id, state: view.record.state });
  };

/** `POST /api/tasks/:id/deliveries/:webhook/:seq/redeliver`: a dead letter queued again, audited. */
export const redeliver =
  (o: ConsoleOptions): Handler =>
  async (req, res) => {
    const grant = grantOf(res);
    const taskId = String(req.params.id);
    const configId = String(req.params.webhook);
    const seqText = String(req.params.seq);
    if (!/^[1-9]\d{0,9}$/.test(seqText))
      throw new Refused(400, 'The event number (seq) must be a positive whole number');
    const seq = Number(seqText);
    const { owner } = await o.engine.operatorRedeliver(grant, { taskId, configId, seq });
    o.audit('push-redeliver', principalOf(res), taskId, {
      grant: 'operator',
      operator: grant.operator,
      owner,
      configId,
      seq,
    });
    res.json({ taskId, webhook: configId, seq, queued: true });
  };
