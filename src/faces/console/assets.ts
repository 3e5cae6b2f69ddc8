import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface Asset {
  type: string;
  body: Buffer;
}

/**
 * The console's script and style (plain files beside the sources, as the inbox's: the build leaves
 * them in src/, whence dist/ reads them), the SSE parser and uPlot from node_modules: everything the
 * page loads comes from this server, nothing from a CDN.
 */
export function loadAssets(): Record<string, Asset> {
  const own = (name: string): Buffer => {
    const candidates = [
      new URL(`./assets/${name}`, import.meta.url),
      new URL(`../../../../src/faces/console/assets/${name}`, import.meta.url),
    ];
    for (const url of candidates) {
      try {
        return readFileSync(url);
      } catch {}
    }
    throw new Error(`console: asset ${name} not found beside ${fileURLToPath(import.meta.url)}`);
  };
  const uplot = (file: string) => readFileSync(new URL(`dist/${file}`, packageDir('uplot')));
  return {
    'console.js': { type: 'text/javascript', body: own('console.js') },
    'charts.js': { type: 'text/javascript', body: own('charts.js') },
    'console.css': { type: 'text/css', body: own('console.css') },
    // The minified classic build (~50 KB): it defines the global uPlot the charts module uses.
    'uplot.js': { type: 'text/javascript', body: uplot('uPlot.iife.min.js') },
    'uplot.css': { type: 'text/css', body: uplot('uPlot.min.css') },
    'eventsource-parser.js': {
      type: 'text/javascript',
      body: stripSourceMap(readFileSync(new URL(import.meta.resolve('eventsource-parser')))),
    },
  };
}

/** The folder of an installed package (its main entry is under dist/). */
const packageDir = (name: string): URL => new URL('../', import.meta.resolve(name));

/** The map file is not served: the comment pointing at it would only make browsers ask for it. */
const stripSourceMap = (code: Buffer): Buffer =>
  Buffer.from(code.toString('utf8').replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n'));
