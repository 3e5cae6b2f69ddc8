import { Agent } from 'node:http';
import { postText } from './rpc.js';
import { sleep } from './stats.js';

/** What one paced run of requests got. */
export interface Paced {
  /** Per request answered: ms from sending it to the end of its answer. */
  samplesMs: number[];
  /** Answers other than a 200 without a JSON-RPC error, and connection errors. */
  failures: number;
  firstFailure?: string;
}

/**
 * `perS` JSON-RPC requests a second for `durationS`, each sent at its time whatever the earlier
 * ones take (open loop: a slow answer does not hold back the next request, so a server that
 * slows down is seen slowing rather than sent less), each timed on its own. A light caller's
 * view of the server, where autocannon's closed loop measures how much it takes.
 */
export async function paced(
  url: string,
  headers: Record<string, string>,
  body: () => string,
  perS: number,
  durationS: number,
): Promise<Paced> {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const out: Paced = { samplesMs: [], failures: 0 };
  const fail = (why: string) => {
    out.failures++;
    out.firstFailure ??= why;
  };
  const one = async (): Promise<void> => {
    const sent = performance.now();
    try {
      const { status, text } = await postText(url, body(), headers, agent);
      if (status === 200 && !text.includes('"error"')) out.samplesMs.push(performance.now() - sent);
      else fail(`${status} ${text.slice(0, 200)}`);
    } catch (err) {
      fail((err as Error).message);
    }
  };
  const sent: Promise<void>[] = [];
  const start = performance.now();
  const count = Math.round(perS * durationS);
  for (let i = 0; i < count; i++) {
    const wait = start + (i * 1000) / perS - performance.now();
    if (wait > 0) await sleep(wait);
    sent.push(one());
  }
  await Promise.all(sent);
  agent.destroy();
  return out;
}
