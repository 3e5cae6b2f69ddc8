import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import express from 'express';

/**
 * What the server's browser pages (the approvals inbox, the operator console) share: one strict
 * policy, the page itself, and its scripts and styles served from this server, never a CDN.
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
 * A router holding the page at `/` and each asset at `/<name>`, every answer (the API routes added
 * to it after these too) under the security headers above. `html` is given where the router is
 * reached (`/inbox`, or `/agent/inbox` in an app that mounts the faces under `/agent`): the page
 * links its own assets there.
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
  for (const [name, asset] of Object.entries(assets)) {
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

/** The SSE parser's browser build, from node_modules (the pages follow changes over SSE). */
export const eventSourceParser = (): Asset => ({
  type: 'text/javascript',
  body: stripSourceMap(readFileSync(new URL(import.meta.resolve('eventsource-parser')))),
});

/** A file of an installed package whose main entry is under its dist/ (uPlot's builds, say). */
export const packageAsset = (pkg: string, file: string, type: string): Asset => ({
  type,
  body: readFileSync(new URL(`dist/${file}`, new URL('../', import.meta.resolve(pkg)))),
});

/**
 * The sign-in form both pages open with (their scripts read #sign-in-form): the caller's API key or
 * bearer token, kept in the tab only; `note` says whose credentials the page wants.
 */
export const signInSection = (
  note: string,
): string => `  <section id="sign-in" aria-labelledby="sign-in-title" hidden>
    <h2 id="sign-in-title">Sign in</h2>
    <p>${note}</p>
    <form id="sign-in-form">
      <fieldset>
        <legend>Kind of credential</legend>
        <label><input type="radio" name="kind" value="api-key" checked> API key (<code>X-API-Key</code>)</label>
        <label><input type="radio" name="kind" value="bearer"> Bearer token (JWT)</label>
      </fieldset>
      <label for="credential">Credential</label>
      <input id="credential" name="credential" type="password" autocomplete="off" required spellcheck="false">
      <button type="submit">Sign in</button>
    </form>
  </section>`;

/** The map file is not served: the comment pointing at it would only make browsers ask for it. */
const stripSourceMap = (code: Buffer): Buffer =>
  Buffer.from(code.toString('utf8').replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n'));
