import { isEngineError } from '../../engine/errors.js';
import { STATUS_OF } from '../http/problem.js';
import { type Handler, Refused } from '../http/route.js';

/**
 * The engine calls its records tasks; a caller of /v1/jobs knows them as jobs (`/v1/jobs/nope`
 * answers "Job nope not found", not "Task nope not found"). Only the words change: an engine error
 * keeps its status, and errors of the route's own are already worded for jobs.
 *
 * @example jobs.get('/:id', route(inJobWords(getJob(o))));
 */
export const inJobWords =
  (handler: Handler): Handler =>
  async (req, res) => {
    try {
      await handler(req, res);
    } catch (err) {
      if (!isEngineError(err)) throw err;
      throw new Refused(STATUS_OF[err.code], jobWords(err.message));
    }
  };

const WORDS: Record<string, string> = { Task: 'Job', task: 'job', Tasks: 'Jobs', tasks: 'jobs' };

/** `Task x is completed; ... start a new task` -> `Job x is completed; ... start a new job`. */
export const jobWords = (message: string): string =>
  message.replace(/\b(Task|task|Tasks|tasks)\b/g, (w) => WORDS[w] ?? w);
