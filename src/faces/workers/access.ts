import type { NextFunction, Request, Response } from 'express';
import { principalOf, problem } from '../http/problem.js';
import type { WorkersOptions } from './options.js';

/**
 * Express middleware after admission: lets workers through (principals WORKERS names, and on an
 * anonymous loopback server its local user) and refuses anyone else with 403, before anything is read.
 */
export function workersOnly(o: WorkersOptions) {
  return (_req: Request, res: Response, next: NextFunction): void => {
    const principal = principalOf(res);
    if (principal.worker || (o.localWorker && principal.via === 'anonymous')) {
      next();
      return;
    }
    problem(
      res,
      403,
      'This credential may not work tasks: WORKERS names the principals (tenant/principal, jwt:tenant/principal, role:NAME) that may claim them',
    );
  };
}
