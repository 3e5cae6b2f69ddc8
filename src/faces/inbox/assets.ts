import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface Asset {
  type: string;
  body: Buffer;
}

/**
 * The page's script and style (plain files kept beside the sources, not compiled: the build leaves
 * them in src/, whence dist/ reads them) and the SSE parser's browser build from node_modules.
 */
export function loadAssets(): Record<string, Asset> {
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
