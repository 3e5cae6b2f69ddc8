/**
 * What the flood scenario's flooder (flooder.ts, a process of its own) and the bench share: its
 * jobs' length, the refusal of each bound it takes (docs/SECURITY.md, Limits), and what it reports
 * over IPC. Apart from flooder.ts so that the bench reads them without loading the flooder, which
 * runs when loaded.
 */

/**
 * The flooder's `sleep` jobs, in seconds. The skill reports progress in whole percents, and only
 * when it changes: a job of 200 s has an event every 2 s for its streams and webhooks to carry (an
 * hour-long one, every 36 s), and still runs through a round on a loaded machine, where taking the
 * bounds was seen to take 70 s (a job of 100 s ended during the measurement).
 */
export const FLOOD_JOB_S = 200;

/** The JSON-RPC error codes of MAX_ACTIVE_TASKS, MAX_STREAMS and MAX_PUSH_CONFIGS. */
export const REFUSED = { tasks: '-32053', streams: '-32054', pushConfigs: '-32004' } as const;

/** What the flooder got before each bound refused it, and how long taking it all took. */
export interface BuildUp {
  tasks: number;
  /** Tasks given webhooks, and the webhooks they took in all. */
  pushTasks: number;
  pushConfigs: number;
  streams: number;
  /** Requests a connection error cut off, sent again. */
  connectionErrors: number;
  seconds: number;
}

/** Answers by kind (`accepted`, a JSON-RPC error code, `HTTP <status>`, `error <code>`), and how many. */
export type Outcomes = Record<string, number>;

/** What the flooder's retries got once it held every bound, and what the held resources carried meanwhile. */
export interface Retried {
  seconds: number;
  creates: Outcomes;
  streams: Outcomes;
  pushConfigs: Outcomes;
  /** Webhook POSTs its receiver got, and events its open streams got, over the same time. */
  webhookPosts: number;
  streamEvents: number;
}
