import type { Response } from 'express';
import type { EngineErrorCode } from '../../engine/errors.js';

/** The HTTP status of each engine error, as the inbox answers it. */
export const STATUS_OF: Record<EngineErrorCode, number> = {
  'task-not-found': 404,
  'task-not-cancelable': 409,
  'unsupported-operation': 409,
  'invalid-params': 400,
  'unknown-skill': 400,
  'shutting-down': 503,
  'too-many-tasks': 429,
  forbidden: 403,
};

/** An RFC 9457 problem response. */
export function problem(res: Response, status: number, detail: string): void {
  res
    .status(status)
    .type('application/problem+json')
    .send(JSON.stringify({ type: 'about:blank', title: titleOf(status), status, detail }));
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  503: 'Service Unavailable',
};
const titleOf = (status: number): string => TITLES[status] ?? 'Error';
