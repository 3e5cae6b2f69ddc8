import { z } from 'zod';
import {
  ArtifactBody,
  AskBody,
  ClaimBody,
  CompleteBody,
  FailBody,
  ProgressBody,
  StatusBody,
} from './requests.js';

const schema = (s: z.ZodType) => {
  const { $schema: _dialect, ...json } = z.toJSONSchema(s, { io: 'input' }) as Record<string, unknown>;
  return json;
};

const json = (s: z.ZodType) => ({ required: true, content: { 'application/json': { schema: schema(s) } } });
const answer = (description: string) => ({
  description,
  content: { 'application/json': { schema: { type: 'object' } } },
});
const refusals = {
  '400': { description: 'The body or a header is not what the route takes (detail says what to send)' },
  '401': { description: 'No valid credentials' },
  '403': { description: 'Not a worker (WORKERS), or not one that may work this skill' },
  '409': { description: 'The lease no longer holds the task (reason: lease-lost): stop working on it' },
};
const LEASE = {
  name: 'Lease-Token',
  in: 'header',
  required: true,
  description: "The claim's lease.token",
  schema: { type: 'string' },
};
const TASK = { name: 'taskId', in: 'path', required: true, schema: { type: 'string' } };

/** A write to a held task: its body (if any) and what it answers. */
function write(summary: string, body: z.ZodType | undefined, answers: string) {
  return {
    post: {
      summary,
      parameters: [TASK, LEASE],
      ...(body ? { requestBody: json(body) } : {}),
      responses: { '200': answer(answers), ...refusals },
    },
  };
}

/** The OpenAPI 3.1 document of the worker protocol (docs/workers.md), for the remote skills offered. */
export function workersOpenApi(remoteSkills: readonly string[]) {
  const job = '/v1/workers/jobs/{taskId}';
  return {
    openapi: '3.1.0',
    info: {
      title: 'taskhandle workers',
      version: '1',
      description: `Remote workers claim and work the tasks of remote skills (${remoteSkills.join(', ') || 'none offered'}). See docs/workers.md.`,
    },
    paths: {
      '/v1/workers/claims': {
        post: {
          summary: 'Claim tasks (long poll)',
          requestBody: json(ClaimBody),
          responses: { '200': answer('{"jobs": [Job]}: empty when the wait ran out'), ...refusals },
        },
      },
      [`${job}/heartbeat`]: write(
        'Extend the lease',
        undefined,
        'Lease; state "canceled" when the owner canceled',
      ),
      [`${job}/progress`]: write('Report progress', ProgressBody, 'Lease'),
      [`${job}/status`]: write('Send a status message', StatusBody, 'Lease'),
      [`${job}/artifacts`]: write('Write an artifact', ArtifactBody, '{"artifactId", ...Lease}'),
      [`${job}/artifacts/{artifactId}`]: {
        put: {
          summary: 'Stream a file into an artifact',
          parameters: [
            TASK,
            LEASE,
            { name: 'artifactId', in: 'path', required: true, schema: { type: 'string' } },
            { name: 'name', in: 'query', schema: { type: 'string' } },
            { name: 'filename', in: 'query', schema: { type: 'string' } },
            { name: 'append', in: 'query', schema: { enum: ['true', 'false'] } },
          ],
          requestBody: {
            required: true,
            content: { '*/*': { schema: { type: 'string', format: 'binary' } } },
          },
          responses: {
            '200': answer('{"artifactId", "bytes", ...Lease}'),
            '413': { description: 'Larger than the artifact may be (the task failed)' },
            ...refusals,
          },
        },
      },
      [`${job}/ask`]: write('Ask for input', AskBody, '{"taskId", "state": "input-required" | "submitted"}'),
      [`${job}/complete`]: write('Complete the task', CompleteBody, '{"taskId", "state"}'),
      [`${job}/fail`]: write('Fail the task (or retry it)', FailBody, '{"taskId", "state", "retryAt"?}'),
      [`${job}/release`]: write('Give the task back', undefined, 'Lease'),
    },
  };
}
