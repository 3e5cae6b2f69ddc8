import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import express from 'express';
import { isTerminal, TASK_STATES } from '../../engine/task.js';

/**
 * What the server's browser pages (the approvals inbox, the operator console) share: one strict
 * policy, the page itself, the kit both pages' scripts and styles build on, all served from this
 * server, never a CDN.
 */

export interface Asset {
  type: string;
  body: Buffer;
}

/** Scripts, styles and connections of this origin only, nothing inline, never framed. */
const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
};

/**
 * A router holding the page at `/`, the kit (kit.js, kit.css, states.js, eventsource-parser.js) and
 * the page's own assets each at `/<name>`, every answer (the API routes added to it after these too)
 * under the security headers above. `html` is given where the router is reached (`/inbox`, or
 * `/agent/inbox` in an app that mounts the faces under `/agent`): the page links its assets there,
 * and its scripts import the kit from beside themselves.
 *
 * The kit is served beside each page, not once at a shared path: it is 18 KB, revalidated (304) on
 * every load either way, and a shared path would save only its first download in a browser that
 * opens both pages, at the price of pages whose imports depend on where another route is mounted.
 */
export function pageRouter(html: (base: string) => string, assets: Record<string, Asset>): express.Router {
  const router = express.Router();
  router.use((_req, res, next) => {
    res.set(SECURITY_HEADERS);
    next();
  });
  router.get('/', (req, res) => {
    // The mounted path as this request spelled it (express matches it ignoring case): made per
    // request, never kept, so no caller can grow a cache of spellings.
    const base = encodeURI(req.baseUrl).replace(/"/g, '%22');
    res.set('Cache-Control', 'no-store').type('html').send(html(base));
  });
  for (const [name, asset] of Object.entries({ ...kitAssets(), ...assets })) {
    router.get(`/${name}`, (_req, res) => {
      res.set('Cache-Control', 'no-cache').type(asset.type).send(asset.body);
    });
  }
  return router;
}

/**
 * A face's own plain files (kept in `src/faces/<face>/assets/`, not compiled: the build leaves them
 * in src/, whence dist/ reads them), by name and media type.
 */
export function ownAssets(face: string, files: Record<string, string>): Record<string, Asset> {
  const read = (name: string): Buffer => {
    const candidates = [
      new URL(`../${face}/assets/${name}`, import.meta.url),
      new URL(`../../../../src/faces/${face}/assets/${name}`, import.meta.url),
    ];
    for (const url of candidates) {
      try {
        return readFileSync(url);
      } catch {}
    }
    throw new Error(`${face}: asset ${name} not found beside ${fileURLToPath(import.meta.url)}`);
  };
  return Object.fromEntries(Object.entries(files).map(([name, type]) => [name, { type, body: read(name) }]));
}

/** A file of an installed package whose main entry is under its dist/ (uPlot's builds, say). */
export const packageAsset = (pkg: string, file: string, type: string): Asset => ({
  type,
  body: readFileSync(new URL(`dist/${file}`, new URL('../', import.meta.resolve(pkg)))),
});

/**
 * The engine's task states as a module the pages import (`TASK_STATES`, `TERMINAL_STATES`): written
 * from the engine's own list when the server starts, so that a page never holds a copy of it.
 */
const statesModule = (): Asset => ({
  type: 'text/javascript',
  body: Buffer.from(
    "// The task states of this server's engine (src/engine/task.ts), in its order.\n" +
      `export const TASK_STATES = Object.freeze(${JSON.stringify(TASK_STATES)});\n` +
      `export const TERMINAL_STATES = Object.freeze(${JSON.stringify(TASK_STATES.filter(isTerminal))});\n`,
  ),
});

/** The map file is not served: the comment pointing at it would only make browsers ask for it. */
const stripSourceMap = (code: Buffer): Buffer =>
  Buffer.from(code.toString('utf8').replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n'));

let kit: Record<string, Asset> | undefined;

/**
 * What every page loads beside its own files: the kit (sign-in, API calls, the change stream, the
 * common look), the engine's states, and the SSE parser's browser build from node_modules (the pages
 * follow changes over SSE). Read once, by the first page router made.
 */
const kitAssets = (): Record<string, Asset> =>
  (kit ??= {
    ...ownAssets('browser', { 'kit.js': 'text/javascript', 'kit.css': 'text/css' }),
    'states.js': statesModule(),
    'eventsource-parser.js': {
      type: 'text/javascript',
      body: stripSourceMap(readFileSync(new URL(import.meta.resolve('eventsource-parser')))),
    },
  });
