import type { Request, Response } from 'express';
import { isEngineError } from '../../engine/errors.js';
import { BodyRefused } from './body.js';
import { bodyProblem, problem, STATUS_OF } from './problem.js';

/** A request refused with a problem document (thrown inside handlers, answered by {@link route}). */
export class Refused extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export type Handler = (req: Request, res: Response) => Promise<void>;

/**
 * Wraps a handler of a problem-document face: refusals, refused bodies (as {@link bodyProblem}
 * answers them) and engine errors become problem documents; anything else goes on to the server's
 * error handler (a 500 that tells nothing of its cause).
 */
export const route =
  (handler: Handler): Handler =>
  async (req, res) => {
    try {
      await handler(req, res);
    } catch (err) {
      if (err instanceof Refused) problem(res, err.status, err.message, err.extra);
      else if (err instanceof BodyRefused) bodyProblem(res, err);
      else if (isEngineError(err)) problem(res, STATUS_OF[err.code], err.message);
      else throw err;
    }
  };
