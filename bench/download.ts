import { request } from 'node:http';

/** A file download as the bench reads it: every byte received and counted, none kept. */

export interface Download {
  status: number;
  bytes: number;
  seconds: number;
  /** The `Content-Range` header of a ranged answer. */
  contentRange?: string;
  /** The last bytes received (up to 64), to check that the end of the file came. */
  tail: Buffer;
}

/** GETs `url` (with `headers`: credentials, a `Range`), reading the body to its end. */
export function download(url: string, headers: Record<string, string>): Promise<Download> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = request(url, { headers }, (res) => {
      let bytes = 0;
      let tail = Buffer.alloc(0);
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        tail = Buffer.concat([tail, chunk.subarray(-64)]).subarray(-64);
      });
      res.on('error', reject);
      res.on('end', () => {
        const range = res.headers['content-range'];
        resolve({
          status: res.statusCode ?? 0,
          bytes,
          seconds: (performance.now() - t0) / 1000,
          ...(range ? { contentRange: range } : {}),
          tail,
        });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** Samples one figure (a server's RSS) every `everyMs` until stopped; keeps the highest. */
export class PeakMeter {
  #peak = Number.NEGATIVE_INFINITY;
  readonly #read: () => number;
  readonly #timer: NodeJS.Timeout;

  constructor(read: () => number, everyMs = 50) {
    this.#read = read;
    this.#sample();
    this.#timer = setInterval(() => this.#sample(), everyMs);
  }

  #sample(): void {
    const v = this.#read();
    if (v > this.#peak) this.#peak = v;
  }

  /** Stops sampling (one last sample first) and returns the highest value seen. */
  stop(): number {
    clearInterval(this.#timer);
    this.#sample();
    return this.#peak;
  }
}
