import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { fileURLToPath } from 'node:url';
import express, { type NextFunction, type Request, type Response } from 'express';
import { z } from 'zod';
import { ownerKey, type Principal } from '../../auth/principal.js';
import type { Engine } from '../../engine/engine.js';
import { type EngineErrorCode, isEngineError } from '../../engine/errors.js';
import type { Part } from '../../engine/task.js';
import type { Admission } from '../a2a/admission.js';
import { BodyTooLarge, isJsonContentType, readBody } from '../http/body.js';
import { changeStream } from './events.js';
import { INBOX_PAGE } from './page.js';
import { approverNameOf, toWaitingItem } from './waiting.js';

export const INBOX_PATH = '/inbox';

export interface InboxOptions {
  engine: Engine;
  /** Who is calling, and whether they may now (401 without valid credentials, 429 over their rate). */
  admit: (req: IncomingMessage) => Promise<Admission>;
  maxBodyBytes: number;
  keepAliveMs: number;
  shutdown: AbortSignal;
}

/** How many waiting tasks one page lists. */
const LIST_LIMIT = 200;

const Answer = z.union([
  z.strictObject({
    decision: z.enum(['approve', 'reject']),
    comment: z.string().trim().max(2000).optional(),
  }),
  z.strictObject({ text: z.string().trim().min(1).max(10_000) }),
]);

const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
};

const STATUS_OF: Record<EngineErrorCode, number> = {
  'task-not-found': 404,
  'task-not-cancelable': 409,
  'unsupported-operation': 409,
  'invalid-params': 400,
  'unknown-skill': 400,
  'shutting-down': 503,
  'too-many-tasks': 429,
  forbidden: 403,
};

/**
 * The approvals inbox: a page where an approver signs in with the same credentials as the API,
 * sees the tasks waiting for them (their own, or naming them as approver) and answers them; the
 * list follows changes over SSE. Every JSON endpoint goes through admission; the engine decides
 * who may see and answer what (another approver's task does not exist for the caller).
 */
export function inboxRouter(o: InboxOptions): express.Router {
  const router = express.Router();
  const assets = loadAssets();
  router.use((_req, res, next) => {
    res.set(SECURITY_HEADERS);
    next();
  });
  router.get('/', (_req, res) => {
    res.set('Cache-Control', 'no-store').type('html').send(INBOX_PAGE);
  });
  for (const [name, asset] of Object.entries(assets)) {
    router.get(`/${name}`, (_req, res) => {
      res.set('Cache-Control', 'no-cache').type(asset.type).send(asset.body);
    });
  }

  const api = express.Router();
  api.use(async (req: Request, res: Response, next: NextFunction) => {
    res.set('Cache-Control', 'no-store');
    const auth = await o.admit(req);
    if (!auth.ok) {
      const { status, headers, message } = auth.refusal;
      problem(res.set(headers), status, message);
      return;
    }
    res.locals.principal = auth.principal;
    next();
  });
  const principalOf = (res: Response): Principal => res.locals.principal as Principal;
  const waiting = (p: Principal) => o.engine.waitingFor(ownerKey(p), approverNameOf(p), LIST_LIMIT);

  api.get('/waiting', async (_req, res) => {
    const principal = principalOf(res);
    const records = await waiting(principal);
    const now = o.engine.now();
    res.json({
      caller: approverNameOf(principal) ?? 'anonymous',
      tasks: records.map((r) => toWaitingItem(r, principal, now)),
    });
  });

  api.post('/tasks/:id/answer', async (req, res) => {
    const principal = principalOf(res);
    if (!isJsonContentType(req.headers['content-type'])) {
      problem(res, 415, 'Send the answer as application/json');
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(await readBody(req, o.maxBodyBytes));
    } catch (err) {
      if (err instanceof BodyTooLarge) problem(res, 413, err.message);
      else problem(res, 400, 'The body is not JSON');
      return;
    }
    const parsed = Answer.safeParse(body);
    if (!parsed.success) {
      problem(res, 400, 'Send {"decision": "approve"|"reject", "comment"?: string} or {"text": string}');
      return;
    }
    const answer = parsed.data;
    const parts: Part[] =
      'text' in answer
        ? [{ text: answer.text }]
        : [{ data: { decision: answer.decision, ...(answer.comment ? { comment: answer.comment } : {}) } }];
    const id = String(req.params.id);
    try {
      const result = await o.engine.send(
        ownerKey(principal),
        { messageId: randomUUID(), role: 'ROLE_USER', taskId: id, parts },
        undefined,
        undefined,
        { skills: principal.skills, approverName: approverNameOf(principal) },
      );
      const state = result.kind === 'task' ? result.view.record.state : undefined;
      res.json({ id, state });
    } catch (err) {
      if (!isEngineError(err)) throw err;
      problem(res, STATUS_OF[err.code], err.message);
    }
  });

  api.get('/events', (req, res) => {
    const principal = principalOf(res);
    changeStream(res, {
      onStatus: (listener) => o.engine.onStatus(listener),
      snapshot: async () => (await waiting(principal)).map((r) => `${r.id}@${r.updatedAt}`).join(','),
      keepAliveMs: o.keepAliveMs,
      shutdown: o.shutdown,
    });
    req.on('error', () => {});
  });

  api.use((_req, res) => problem(res, 404, 'No such inbox endpoint'));
  router.use('/api', api);
  return router;
}

/** An RFC 9457 problem response. */
function problem(res: Response, status: number, detail: string): void {
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

interface Asset {
  type: string;
  body: Buffer;
}

/**
 * The page's script and style (plain files kept beside the sources, not compiled: the build leaves
 * them in src/, whence dist/ reads them) and the SSE parser's browser build from node_modules.
 */
function loadAssets(): Record<string, Asset> {
  const own = (name: string): Buffer => {
    const candidates = [
      new URL(`./assets/${name}`, import.meta.url),
      new URL(`../../../../src/faces/inbox/assets/${name}`, import.meta.url),
    ];
    for (const url of candidates) {
      try {
        return readFileSync(url);
      } catch {}
    }
    throw new Error(`inbox: asset ${name} not found beside ${fileURLToPath(import.meta.url)}`);
  };
  return {
    'inbox.js': { type: 'text/javascript', body: own('inbox.js') },
    'inbox.css': { type: 'text/css', body: own('inbox.css') },
    'eventsource-parser.js': {
      type: 'text/javascript',
      body: stripSourceMap(readFileSync(new URL(import.meta.resolve('eventsource-parser')))),
    },
  };
}

/** The map file is not served: the comment pointing at it would only make browsers ask for it. */
const stripSourceMap = (code: Buffer): Buffer =>
  Buffer.from(code.toString('utf8').replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n'));
