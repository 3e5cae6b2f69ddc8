import type { SkillRegistry } from '../../engine/registry.js';

/** The OpenAPI 3.1 description of /v1/jobs, served at /v1/openapi.json (checked against real answers in tests). */

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown) => ({ 'application/json': { schema } });
const problemContent = { 'application/problem+json': { schema: ref('Problem') } };
const err = (description: string) => ({ description, content: problemContent });
const retryAfter = {
  'Retry-After': { schema: { type: 'integer' }, description: 'Seconds until the next poll' },
};
const location = { Location: { schema: { type: 'string' }, description: 'The job: /v1/jobs/{id}' } };
/** The job's generation as its entity tag (docs/generations.md); If-Match makes a change conditional on it. */
const etag = { ETag: { schema: { type: 'string' }, description: 'The job’s generation, "12"' } };
const ifMatch = {
  name: 'If-Match',
  in: 'header',
  schema: { type: 'string' },
  description: 'The ETag the job must still have ("12"): else 412, nothing done',
};
const stale = {
  '412': err('If-Match names a generation the job has moved past (currentGeneration says where it is)'),
};
const common = {
  '401': err('No or invalid credentials (WWW-Authenticate says which)'),
  '429': err('Over the request rate (Retry-After)'),
  '413': err('A body (on any method) over MAX_BODY_BYTES'),
  '415': err('A compressed body (Content-Encoding other than identity); on POST, a body that is not JSON'),
  '500': err('An internal failure (the database unreachable, say); its cause is in the server log'),
};
/** Routes with a job id in the path: an id that does not decode is a 400. */
const badPath = { '400': err('A malformed %-escape in the path') };
const id = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
const jobOk = {
  description: 'The job document',
  content: json(ref('Job')),
  headers: { ...retryAfter, ...etag },
};

const OPENAPI = {
  openapi: '3.1.0',
  info: {
    title: 'taskhandle jobs',
    version: '1.0.0',
    description: 'The engine tasks as HTTP 202 Accepted jobs. See docs/http-jobs.md.',
  },
  paths: {
    '/v1/jobs': {
      post: {
        summary: 'Start a job',
        parameters: [
          { name: 'Idempotency-Key', in: 'header', schema: { type: 'string' } },
          { name: 'Prefer', in: 'header', schema: { type: 'string' }, description: 'respond-async, wait=N' },
        ],
        requestBody: { required: true, content: json(ref('NewJob')) },
        responses: {
          '200': {
            description: 'Prefer: wait=N and the job ended within N s: the document with its artifacts',
            content: json(ref('JobWithResult')),
          },
          '202': {
            description: 'Accepted',
            content: json(ref('Job')),
            headers: { ...retryAfter, ...location },
          },
          '400': err('Invalid body, unknown skill, invalid input, or JSON nested deeper than MAX_JSON_DEPTH'),
          '403': err('The caller may not use this skill'),
          '409': err('A request with this Idempotency-Key is still in flight'),
          '422': err('Idempotency-Key reused with another payload'),
          ...common,
        },
      },
      get: {
        summary: "List the caller's jobs",
        parameters: [
          { name: 'pageSize', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100 } },
          { name: 'pageToken', in: 'query', schema: { type: 'string' } },
        ],
        responses: {
          '200': { description: 'A page of jobs', content: json(ref('JobList')) },
          '400': err('Invalid pageSize'),
          ...common,
        },
      },
    },
    '/v1/jobs/{id}': {
      parameters: [id],
      get: {
        summary: 'The job document',
        parameters: [
          { name: 'follow', in: 'query', schema: { const: 'result' } },
          {
            name: 'If-None-Match',
            in: 'header',
            schema: { type: 'string' },
            description: 'The ETag last seen: 304 while the job has it (with Prefer: wait=N, a long poll)',
          },
          {
            name: 'Prefer',
            in: 'header',
            schema: { type: 'string' },
            description: 'wait=N: with If-None-Match, wait up to N s (at most 30) for a change',
          },
        ],
        responses: {
          '200': jobOk,
          '303': { description: '?follow=result on a completed job: see the result', headers: location },
          '304': {
            description: 'If-None-Match names the job’s ETag: unchanged (after the wait, with Prefer: wait)',
            headers: etag,
          },
          '404': err('No such job (or not the caller’s)'),
          ...badPath,
          ...common,
        },
      },
      delete: {
        summary: 'Cancel the job if it runs (tasks are deleted only when their TTL ends)',
        parameters: [ifMatch],
        responses: { '200': jobOk, '404': err('No such job'), ...stale, ...badPath, ...common },
      },
    },
    '/v1/jobs/{id}:cancel': {
      parameters: [id],
      post: {
        summary: 'Cancel the job',
        parameters: [ifMatch],
        responses: {
          '200': jobOk,
          '404': err('No such job'),
          '409': err('Already finished'),
          ...stale,
          ...badPath,
          ...common,
        },
      },
    },
    '/v1/jobs/{id}:input': {
      parameters: [id],
      post: {
        summary: 'Answer a job waiting for input',
        parameters: [ifMatch],
        requestBody: { required: true, content: json(ref('Answer')) },
        responses: {
          '200': {
            description: 'The job document (to its owner), or its status only (to an approver it names)',
            content: json({ oneOf: [ref('Job'), ref('ApproverAnswer')] }),
          },
          '400': err(
            'Invalid answer, JSON nested deeper than MAX_JSON_DEPTH, or a malformed %-escape in the path',
          ),
          '404': err('No such job'),
          '409': err('The job waits for no input'),
          ...stale,
          ...common,
        },
      },
    },
    '/v1/jobs/{id}/result': {
      parameters: [id],
      get: {
        summary: 'The result of a completed job',
        parameters: [{ name: 'download', in: 'query', schema: { const: '1' } }],
        responses: {
          '200': {
            description: 'The artifacts (or, with ?download=1, the file)',
            content: json(ref('Result')),
          },
          '202': {
            description: 'Not done yet',
            content: json(ref('Job')),
            headers: { ...retryAfter, ...location },
          },
          '404': err('No such job'),
          '406': err('?download=1 on a result that is not one file'),
          '409': err('The job failed or was cancelled: it has no result'),
          ...badPath,
          ...common,
        },
      },
    },
    '/v1/jobs/{id}/events': {
      parameters: [id, { name: 'Last-Event-ID', in: 'header', schema: { type: 'string' } }],
      get: {
        summary: 'Server-Sent Events: the job document after each event of its log',
        responses: {
          '200': {
            description: 'An event stream',
            content: { 'text/event-stream': { schema: ref('JobEvent') } },
          },
          '404': err('No such job'),
          ...badPath,
          ...common,
        },
      },
    },
    '/v1/jobs/{id}/artifacts/{artifactId}': {
      parameters: [
        id,
        { name: 'artifactId', in: 'path', required: true, schema: { type: 'string' } },
        {
          name: 'Range',
          in: 'header',
          schema: { type: 'string' },
          description: 'bytes=a-b, bytes=a- or bytes=-n',
        },
      ],
      get: {
        summary: 'The artifact as a file, streamed (large artifacts are linked here from every face)',
        responses: {
          '200': { description: 'The file, as an attachment', content: { '*/*': {} } },
          '206': { description: 'The requested byte range', content: { '*/*': {} } },
          '404': err('No such job, or no such artifact'),
          '416': { description: 'The range starts past the end of the file' },
          ...common,
        },
      },
    },
  },
  components: {
    schemas: {
      Answer: {
        oneOf: [
          { type: 'object', required: ['text'], properties: { text: { type: 'string' } } },
          { type: 'object', required: ['data'], properties: { data: {} } },
        ],
      },
      Job: {
        type: 'object',
        required: [
          'resultType',
          'taskId',
          'status',
          'state',
          'createdAt',
          'lastUpdatedAt',
          'ttlMs',
          'pollIntervalMs',
        ],
        properties: {
          resultType: { const: 'task' },
          taskId: { type: 'string' },
          status: { enum: ['working', 'input_required', 'completed', 'cancelled', 'failed'] },
          state: { type: 'string', description: 'The A2A task state' },
          createdAt: { type: 'string', format: 'date-time' },
          lastUpdatedAt: { type: 'string', format: 'date-time' },
          expiresAt: { type: 'string', format: 'date-time' },
          ttlMs: { type: 'integer' },
          pollIntervalMs: { type: 'integer' },
          statusMessage: { type: 'string' },
          progress: {
            type: 'object',
            properties: { percent: { type: 'number' }, message: { type: 'string' } },
          },
          queue: {
            type: 'object',
            description: "While queued: its place in its owner's queue and what it waits for",
            required: ['position', 'ahead', 'reason'],
            properties: {
              position: { type: 'integer' },
              ahead: { type: 'integer' },
              reason: { enum: ['no free slot', 'tenant limit', 'skill limit', 'retry backoff'] },
            },
          },
          priority: { type: 'integer' },
          reason: { enum: ['failed', 'rejected'] },
          result: { type: 'string', description: 'Once completed: the result path' },
        },
      },
      ApproverAnswer: {
        type: 'object',
        required: ['taskId', 'status'],
        properties: { taskId: { type: 'string' }, status: { type: 'string' } },
      },
      JobWithResult: {
        allOf: [ref('Job'), ref('Result')],
      },
      Result: {
        type: 'object',
        required: ['artifacts'],
        properties: {
          artifacts: {
            type: 'array',
            items: {
              type: 'object',
              required: ['artifactId', 'parts'],
              properties: {
                artifactId: { type: 'string' },
                name: { type: 'string' },
                parts: { type: 'array' },
              },
            },
          },
        },
      },
      JobList: {
        type: 'object',
        required: ['jobs', 'nextPageToken'],
        properties: { jobs: { type: 'array', items: ref('Job') }, nextPageToken: { type: 'string' } },
      },
      JobEvent: {
        type: 'object',
        required: ['seq', 'event', 'job'],
        properties: { seq: { type: 'integer' }, event: { type: 'string' }, job: ref('Job') },
      },
      Problem: {
        type: 'object',
        required: ['type', 'title', 'status', 'detail'],
        properties: {
          type: { type: 'string' },
          title: { type: 'string' },
          status: { type: 'integer' },
          detail: { type: 'string' },
        },
      },
    },
  },
} as const;

const priority = {
  type: 'integer',
  description: "Its place among the caller's own jobs: higher runs sooner (bounds: MAX_PRIORITY)",
};

/**
 * The document for this server's skills: a new job names one of them, with the input its schema
 * (zod or JSON Schema, as the registry shows it) accepts. Skills of the extended card stay out: the
 * document is public.
 *
 * @example router.get('/openapi.json', (_req, res) => res.json(openApiFor(engine.skills, new Set())));
 */
export function openApiFor(skills: SkillRegistry, hidden: ReadonlySet<string>) {
  const jobs = skills
    .all()
    .filter((s) => !hidden.has(s.id))
    .map((s) => ({
      type: 'object',
      title: s.id,
      description: s.description,
      required: ['skill'],
      properties: { skill: { const: s.id }, input: skills.inputJsonSchema(s), priority },
      additionalProperties: false,
    }));
  return { ...OPENAPI, components: { schemas: { ...OPENAPI.components.schemas, NewJob: { oneOf: jobs } } } };
}
