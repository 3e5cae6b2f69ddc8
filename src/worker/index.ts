/**
 * taskhandle's worker client (`taskhandle/worker`): works a server's remote skills from another
 * process, over the worker protocol of docs/workers.md. It loads nothing of the server (no express,
 * no store, no database driver): a worker needs only Node 20 and this module.
 *
 * @example
 * import { runWorker } from 'taskhandle/worker';
 *
 * const worker = runWorker({
 *   url: 'http://127.0.0.1:41241',
 *   skills: { async shout(job) { return { message: String(job.input).toUpperCase() }; } },
 * });
 * process.once('SIGINT', () => void worker.stop());
 *
 * @packageDocumentation
 */

export { JobError } from '../engine/errors.js';
export type { AbortReason, Handler, Job, JobResult, Question, Upload } from './job.js';
export { runWorker, type Worker, type WorkerOptions } from './run-worker.js';
export type { Answer, ArtifactWrite, JsonSchema, Lease, Message, Part } from './types.js';
export { isProblemError, ProblemError } from './worker-http.js';
