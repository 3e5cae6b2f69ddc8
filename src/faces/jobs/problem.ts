import type { Response } from 'express';

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  503: 'Service Unavailable',
};

/** An RFC 9457 problem response; `extra` adds extension members (e.g. the job's status). */
export function problem(
  res: Response,
  status: number,
  detail: string,
  extra: Record<string, unknown> = {},
): void {
  res
    .status(status)
    .type('application/problem+json')
    .send(
      JSON.stringify({ type: 'about:blank', title: TITLES[status] ?? 'Error', status, detail, ...extra }),
    );
}
