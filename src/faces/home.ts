import type { Request, Response } from 'express';
import { type PublishedCard, REST_PATH } from './a2a/agent-card.js';
import { CONSOLE_PATH } from './console/router.js';
import { INBOX_PATH } from './inbox/router.js';
import { JOBS_PATH } from './jobs/document.js';

/** Where the ways into this agent are: what `GET /` shows (paths relative to the agent's URL). */
const WAYS_IN = {
  agentCard: '/.well-known/agent-card.json',
  a2a: {
    jsonrpc: { url: '/', method: 'POST', v1: 'send A2A-Version: 1.0', v03: 'send no A2A-Version header' },
    rest: { v1: `${REST_PATH} (send A2A-Version: 1.0)`, v03: `${REST_PATH}/v1` },
  },
  jobs: JOBS_PATH,
  jobsOpenApi: '/v1/openapi.json',
  inbox: INBOX_PATH,
  console: CONSOLE_PATH,
  health: '/healthz',
};

/**
 * `GET /`: someone who opened the agent's root (a person in a browser, a curl) learns where its
 * card, its A2A endpoints, the jobs API, the inbox, the console and its documentation are: JSON by default, a
 * page of links for a browser. JSON-RPC calls (`POST /`) never reach this.
 *
 * @example app.get('/', home(() => card));
 */
export function home(card: () => PublishedCard) {
  return (_req: Request, res: Response): void => {
    const { name, description, documentationUrl } = card().json as Record<string, string | undefined>;
    // The gRPC binding, when GRPC_PORT serves it: a `host:port` target of its own, as the card lists it.
    const grpc = card().sdk.supportedInterfaces.find((i) => i.protocolBinding === 'GRPC')?.url;
    const a2a = grpc
      ? { ...WAYS_IN.a2a, grpc: { target: grpc, service: 'lf.a2a.v1.A2AService' } }
      : WAYS_IN.a2a;
    const body = { name, description, ...WAYS_IN, a2a, docs: documentationUrl };
    res.set('Cache-Control', 'no-cache');
    res.format({
      'application/json': () => res.json(body),
      'text/html': () => res.type('html').send(page(body, grpc)),
      // Any other Accept still gets the pointers (never a 406): as JSON.
      default: () => res.json(body),
    });
  };
}

function page(b: { name?: string; description?: string; docs?: string }, grpc?: string): string {
  const link = (href: string, text: string) => `<li><a href="${html(href)}">${html(text)}</a></li>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${html(b.name ?? 'A2A agent')}</title></head>
<body><h1>${html(b.name ?? 'A2A agent')}</h1><p>${html(b.description ?? '')}</p><ul>
${link(WAYS_IN.agentCard, 'Agent card')}
${link(WAYS_IN.inbox, 'Approvals inbox')}
${link(WAYS_IN.console, 'Operator console')}
${link(WAYS_IN.jobs, `Jobs (plain HTTP): ${WAYS_IN.jobs}`)}
${link(WAYS_IN.jobsOpenApi, 'Jobs API (OpenAPI)')}
${b.docs ? link(b.docs, 'Documentation') : ''}
</ul><p>A2A: JSON-RPC is POST / (send A2A-Version: 1.0 for v1.0; none for v0.3); HTTP+JSON is under
${html(REST_PATH)} (v1.0, with A2A-Version: 1.0) and ${html(REST_PATH)}/v1 (v0.3).${
    grpc ? ` gRPC (v1.0) is at ${html(grpc)}.` : ''
  }</p></body></html>
`;
}

const html = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
