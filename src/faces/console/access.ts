import type { NextFunction, Request, Response } from 'express';
import { isLoopback } from '../../auth/open.js';
import { approverNameOf, LOCAL_OPERATOR, operatorNamesOf, type Principal } from '../../auth/principal.js';
import type { Engine } from '../../engine/engine.js';
import type { OperatorGrant } from '../../engine/operator.js';
import { principalOf, problem } from '../http/problem.js';

/**
 * Express middleware after admission: lets operators through with their grant (read by
 * {@link grantOf}), decided by the engine from the caller's names before anything is read, and
 * refuses anyone else with 403 and what to do about it.
 *
 * The anonymous caller is an operator only as the local user of an anonymous server on a loopback
 * address (the engine then holds LOCAL_OPERATOR, see server/core.ts), and only over loopback: the
 * request must come from a loopback address and name a loopback host, so a page of another site
 * whose name was made to resolve to 127.0.0.1 (DNS rebinding) is refused. That user already owns
 * every task of such a server through the API; the console shows them nothing they cannot read.
 */
export function operatorsOnly(engine: Engine) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const principal = principalOf(res);
    const names = operatorNamesOf(principal);
    const local = principal.via === 'anonymous' && isLocalRequest(req);
    if (local) names.push(LOCAL_OPERATOR);
    const grant = engine.operatorGrant(names);
    if (!grant) {
      problem(res, 403, refusal(principal, local));
      return;
    }
    res.locals.operator = grant;
    next();
  };
}

/** The operator's grant, as {@link operatorsOnly} decided it. */
export function grantOf(res: Response): OperatorGrant {
  const grant = res.locals.operator as OperatorGrant | undefined;
  if (!grant) throw new Error('console: a route ran without operatorsOnly');
  return grant;
}

function refusal(principal: Principal, local: boolean): string {
  const name = approverNameOf(principal);
  if (name !== undefined)
    return `The console is for operators, and ${name} is not one: ask whoever runs the agent to add "${name}" to OPERATORS (or a role:NAME your token holds)`;
  if (local)
    return 'The console is for operators: this server serves anonymous callers on an address other machines reach, so it has none. Configure API keys or JWTs and name operators in OPERATORS';
  return 'The console is for operators: without credentials, only the local user of a server listening on a loopback address may use it, at http://127.0.0.1:<port>/console or http://localhost:<port>/console';
}

/** Came from this machine, for a loopback host name (not a rebound DNS name). */
function isLocalRequest(req: Request): boolean {
  const remote = (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '');
  const host = (req.headers.host ?? '')
    .toLowerCase()
    .replace(/:\d+$/, '')
    .replace(/^\[(.*)\]$/, '$1');
  return isLoopback(remote) && isLoopback(host);
}
