import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { type ArtifactLink, linkedEntry } from '../engine/artifacts.js';
import type { LoggedEvent } from '../engine/events.js';
import type { DeliveryOutcome, NotificationKey, PendingNotification } from '../engine/push.js';
import type { TaskStore } from '../engine/store-port.js';
import type { TaskView } from '../engine/task.js';
import { viewAt } from '../engine/view.js';
import { traceDelivery } from '../telemetry/push-spans.js';
import type { AddressPolicy } from './address-policy.js';
import type { DeliveryObserver, DeliveryResult } from './delivery-observer.js';
import type { SecretBox } from './secret-box.js';
import type { SigningKeys } from './signing-keys.js';
import { type LookupFunction, postWebhook } from './webhook-client.js';

/** The body of one notification in the wire form `format` names (the face that made the config knows it). */
export type RenderNotification = (
  format: string,
  view: TaskView,
  entry: LoggedEvent,
) => { body: string; contentType: string };

export interface DispatcherOptions {
  store: TaskStore;
  keys: SigningKeys;
  render: RenderNotification;
  /** Where notifications link large artifacts (their content is never put in a body). */
  artifactUrl: ArtifactLink;
  policy: AddressPolicy;
  /** Opens the webhooks' sealed tokens and credentials, to send them. */
  secrets: SecretBox;
  /** One delivery attempt, connect to response. */
  timeoutMs: number;
  /** After this long since its event, a notification still undelivered is dead-lettered. */
  maxAgeMs: number;
  /** Delay before the first retry; doubles per attempt up to `retryMaxMs`, with jitter. */
  retryBaseMs: number;
  retryMaxMs: number;
  /**
   * Attempts to a webhook whose host name does not resolve before its notification is dead-lettered,
   * instead of retrying it until `maxAgeMs`: a name that is not in the DNS rarely comes back.
   */
  dnsMaxAttempts: number;
  /** Deliveries in flight at once (one at a time per webhook of a task, whatever this is). */
  concurrency: number;
  /** How often due retries are looked for when nothing else wakes the dispatcher. */
  pollMs: number;
  clock: () => number;
  logger: Logger;
  /** Name resolution for webhook hosts (tests map names to loopback addresses). */
  lookup?: LookupFunction;
  /** Hears each settled attempt (metrics). */
  observer?: DeliveryObserver;
}

/** Headers of every notification; receivers find their meaning in docs/webhooks.md. */
export const NOTIFICATION_HEADERS = {
  id: 'X-A2A-Notification-Id',
  token: 'X-A2A-Notification-Token',
  signature: 'X-A2A-Notification-Signature',
} as const;

/** A claimed notification stays leased this long past its timeout before another attempt may start. */
const LEASE_MARGIN_MS = 5000;

/**
 * Delivers the push outbox. Notifications are rows written with the events they announce; this
 * claims the due ones under a lease, POSTs each (signed, SSRF-guarded, with a timeout), and records
 * the outcome: delivered rows go, failed ones come back after an exponential backoff with jitter,
 * and those older than `maxAgeMs`, refused for good by the receiver, or whose host name still does
 * not resolve after `dnsMaxAttempts` attempts, are dead-lettered with a log line. A crash between
 * the POST and its record means one repeat, with the same notification id: delivery is at least once.
 */
export class PushDispatcher {
  readonly #options: DispatcherOptions;
  readonly #inFlight = new Set<Promise<void>>();
  #timer: NodeJS.Timeout | undefined;
  #pumping = false;
  #again = false;
  #stopped = false;

  constructor(options: DispatcherOptions) {
    this.#options = options;
  }

  start(): void {
    this.#timer = setInterval(() => this.nudge(), this.#options.pollMs);
    this.#timer.unref();
    this.nudge();
  }

  /** Something was queued (or a delivery finished): look for due notifications now. */
  nudge(): void {
    if (this.#stopped) return;
    if (this.#pumping) {
      this.#again = true;
      return;
    }
    void this.#pump();
  }

  /** Stops claiming; waits up to `timeoutMs` for deliveries in flight (the rest retry after their lease). */
  async stop(timeoutMs: number): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...this.#inFlight]),
      new Promise((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      }),
    ]);
    clearTimeout(timer);
  }

  async #pump(): Promise<void> {
    this.#pumping = true;
    try {
      do {
        this.#again = false;
        const room = this.#options.concurrency - this.#inFlight.size;
        if (room <= 0) break;
        const now = this.#options.clock();
        const due = await this.#options.store.claimNotifications(
          now,
          this.#options.timeoutMs + LEASE_MARGIN_MS,
          room,
        );
        for (const n of due) this.#track(this.#deliver(n));
        if (due.length === room) this.#again = true;
      } while (this.#again && !this.#stopped);
    } catch (err) {
      this.#options.logger.error({ err }, 'push: claiming notifications failed');
    } finally {
      this.#pumping = false;
    }
  }

  #track(delivery: Promise<void>): void {
    this.#inFlight.add(delivery);
    void delivery.finally(() => {
      this.#inFlight.delete(delivery);
      this.nudge();
    });
  }

  async #deliver(n: PendingNotification): Promise<void> {
    const id = notificationId(n);
    const log = {
      notificationId: id,
      taskId: n.taskId,
      configId: n.configId,
      seq: n.seq,
      attempt: n.attempts,
    };
    try {
      const started = this.#options.clock();
      const outcome = await this.#attempt(n, id);
      // Kept with the outcome, for the operator console's delivery history.
      await this.#options.store.settleNotification(n, outcome, {
        attempt: n.attempts,
        at: started,
        durationMs: Math.max(0, this.#options.clock() - started),
        status: outcome.status,
      });
      this.#options.observer?.settled(...observed(outcome, n, this.#options.clock()));
      if (outcome.kind === 'delivered') this.#options.logger.debug(log, 'push: delivered');
      else if (outcome.kind === 'retry')
        this.#options.logger.info({ ...log, error: outcome.error, retryAt: outcome.at }, 'push: will retry');
      else this.#options.logger.warn({ ...log, error: outcome.error }, 'push: dead-lettered');
    } catch (err) {
      // Left leased: it becomes due again when the lease runs out.
      this.#options.logger.error({ ...log, err }, 'push: delivery failed unexpectedly');
    }
  }

  /** The attempt's outcome, with the receiver's HTTP status when it answered. */
  async #attempt(n: PendingNotification, id: string): Promise<Attempted> {
    const o = this.#options;
    const now = o.clock();
    const found = await o.store.getTaskWithLog(n.taskId, now);
    // Progress events are not part of the view's log: read the entry itself then.
    const entry =
      found?.log.find((e) => e.seq === n.seq) ?? (await o.store.readEvents(n.taskId, n.seq - 1, 1))[0];
    if (!found || entry?.seq !== n.seq) return { kind: 'dead', at: now, error: 'the task has expired' };

    const { body, contentType } = o.render(
      n.config.format,
      viewAt(found.record, found.log, n.seq, o.artifactUrl),
      linkedEntry(entry, o.artifactUrl),
    );
    const url = new URL(n.config.url);
    url.hash = ''; // the fragment is ours (see push-config), never sent
    const headers: Record<string, string> = {
      'Content-Type': contentType,
      'User-Agent': 'taskhandle-push',
      [NOTIFICATION_HEADERS.id]: id,
      [NOTIFICATION_HEADERS.signature]: await o.keys.sign(
        { aud: url.href, taskId: n.taskId, notificationId: id, body },
        now,
      ),
    };
    try {
      const { token, authentication: auth } = n.config;
      if (token) headers[NOTIFICATION_HEADERS.token] = o.secrets.unseal(token, 'token');
      const credentials = auth?.credentials && o.secrets.unseal(auth.credentials, 'credentials');
      if (auth) headers.Authorization = credentials ? `${auth.scheme} ${credentials}` : auth.scheme;
    } catch (err) {
      // Another key sealed it: no attempt can send it, and never without it.
      return { kind: 'dead', at: now, error: (err as Error).message };
    }

    const attempt = {
      taskId: n.taskId,
      configId: n.configId,
      attempt: n.attempts,
      url,
      trace: found.record.trace,
    };
    const result = await traceDelivery(attempt, (traceHeaders) =>
      postWebhook({
        url,
        headers: { ...headers, ...traceHeaders },
        body,
        timeoutMs: o.timeoutMs,
        policy: o.policy,
        lookup: o.lookup,
      }),
    );
    const at = o.clock();
    const { status } = result;
    if (result.ok) return { kind: 'delivered', status };
    if (!result.retryable) return { kind: 'dead', at, error: result.error, refused: result.refused, status };
    if (result.unresolved && n.attempts >= o.dnsMaxAttempts) {
      return {
        kind: 'dead',
        at,
        error: `host name does not resolve after ${n.attempts} attempts (${result.error})`,
        status,
      };
    }
    // A receiver's Retry-After (429, 503) is honoured up to PUSH_RETRY_MAX_MS: never sooner than it
    // asks, never later than the policy's longest wait.
    const asked = Math.min(result.retryAfterMs ?? 0, o.retryMaxMs);
    const retryAt = Math.round(at + Math.max(backoff(n.attempts, o.retryBaseMs, o.retryMaxMs), asked));
    if (retryAt - n.createdAt > o.maxAgeMs) {
      return { kind: 'dead', at, error: `${result.error}; gave up after ${n.attempts} attempts`, status };
    }
    return { kind: 'retry', at: retryAt, error: result.error, status };
  }
}

/** An attempt's outcome, whether the address policy refused it, and the receiver's HTTP status. */
type Attempted = DeliveryOutcome & { refused?: true; status?: number };

/** What the observer hears of an attempt settled at `now`. */
function observed(outcome: Attempted, n: PendingNotification, now: number): [DeliveryResult, number?] {
  if (outcome.kind === 'delivered') return ['delivered', now - n.createdAt];
  if (outcome.kind === 'retry') return ['retried'];
  return [outcome.refused ? 'refused' : 'dead-lettered'];
}

/** Stable across attempts and restarts: receivers drop repeats by it. */
export function notificationId(k: NotificationKey): string {
  return createHash('sha256').update(`${k.taskId}\n${k.configId}\n${k.seq}`).digest('base64url').slice(0, 32);
}

/** Exponential backoff with "equal jitter": half fixed, half random, so retries of many tasks spread out. */
export function backoff(attempts: number, baseMs: number, maxMs: number): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempts - 1));
  return ceiling / 2 + Math.random() * (ceiling / 2);
}
