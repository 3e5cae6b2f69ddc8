import type { AbortReason, Job, Question, Upload } from './job.js';
import type { Answer, ArtifactWrite, ClaimedJob, Lease, Message } from './types.js';
import { type Call, isLeaseLost, isProblemError, type WorkerHttp } from './worker-http.js';

/**
 * Thrown by {@link HeldJob.ask} once the question is posted: it unwinds the handler, and the loop,
 * which knows it, writes nothing more for the run (the server ended it). Not exported: a handler
 * that catches it must rethrow it, and even if it does not, the run writes nothing.
 */
export class AskedForInput extends Error {
  override readonly name = 'AskedForInput';
  constructor(taskId: string) {
    super(`task ${taskId} asked for input: this run ends here, the answer starts the next one`);
  }
}

/** One claimed job while this worker holds it: its writes, its heartbeat, its signal. */
export class HeldJob implements Job {
  readonly taskId: string;
  readonly contextId: string;
  readonly skill: string;
  readonly input: unknown;
  readonly message: Message;
  readonly attempt: number;
  readonly interrupted: boolean;
  readonly traceparent: string | undefined;
  readonly signal: AbortSignal;

  readonly #http: WorkerHttp;
  readonly #token: string;
  readonly #heartbeatMs: number;
  readonly #answers: Answer[];
  readonly #controller = new AbortController();
  readonly #onError: (err: unknown) => void;
  #asked = 0;
  #parked = false;
  #beating: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(claimed: ClaimedJob, http: WorkerHttp, onError: (err: unknown) => void) {
    this.taskId = claimed.taskId;
    this.contextId = claimed.contextId;
    this.skill = claimed.skill;
    this.input = claimed.input;
    this.message = claimed.message;
    this.attempt = claimed.attempt;
    this.interrupted = claimed.interrupted;
    this.traceparent = claimed.traceparent;
    this.signal = this.#controller.signal;
    this.#http = http;
    this.#token = claimed.lease.token;
    this.#heartbeatMs = claimed.lease.heartbeatMs;
    this.#answers = claimed.answers ?? [];
    this.#onError = onError;
  }

  /** The run posted a question: the server ended it, and it writes nothing more. */
  get parked(): boolean {
    return this.#parked;
  }

  /** Starts heartbeating every `lease.heartbeatMs` until {@link HeldJob.release} or an abort. */
  start(): void {
    this.#timer = setInterval(() => void this.beat(), this.#heartbeatMs);
  }

  /** Stops the heartbeat (the run's last write is being made, or there is none to make). */
  stopBeating(): void {
    clearInterval(this.#timer);
  }

  abort(reason: AbortReason): void {
    this.stopBeating();
    if (!this.signal.aborted) this.#controller.abort(reason);
  }

  /** One heartbeat now (a beat already in flight is shared): hears of a cancel or a lost lease. */
  beat(): Promise<void> {
    this.#beating ??= this.#http
      .call<Lease>({
        path: this.#path('heartbeat'),
        leaseToken: this.#token,
        signal: AbortSignal.timeout(Math.max(this.#heartbeatMs, 1000)),
      })
      .then((lease) => this.#heard(lease))
      .catch((err: unknown) => {
        // A task gone (404) is no more held than one taken over; anything else may pass: the lease
        // lasts three beats.
        if (isLeaseLost(err) || (isProblemError(err) && err.status === 404)) this.abort('lease-lost');
        else this.#onError(err);
      })
      .finally(() => {
        this.#beating = undefined;
      });
    return this.#beating;
  }

  progress(progress: { percent?: number; message?: string }): Promise<void> {
    return this.#write<Lease>({ path: this.#path('progress'), json: progress }).then(() => {});
  }

  say(text: string): Promise<void> {
    return this.#write<Lease>({ path: this.#path('status'), json: { text } }).then(() => {});
  }

  async artifact(artifact: ArtifactWrite): Promise<string> {
    return (await this.#write<{ artifactId: string }>({ path: this.#path('artifacts'), json: artifact }))
      .artifactId;
  }

  async upload(upload: Upload): Promise<{ artifactId: string; bytes: number }> {
    const artifactId = upload.artifactId ?? crypto.randomUUID();
    const query = new URLSearchParams();
    if (upload.name !== undefined) query.set('name', upload.name);
    if (upload.filename !== undefined) query.set('filename', upload.filename);
    if (upload.append) query.set('append', 'true');
    const q = query.size ? `?${query}` : '';
    const answer = await this.#write<{ artifactId: string; bytes: number }>({
      method: 'PUT',
      path: `${this.#path('artifacts')}/${encodeURIComponent(artifactId)}${q}`,
      raw: upload.body,
      headers: { 'Content-Type': upload.mediaType ?? 'application/octet-stream' },
    });
    return { artifactId: answer.artifactId, bytes: answer.bytes };
  }

  async ask<T = unknown>(question: Question): Promise<Answer<T>> {
    const answer = this.#answers[this.#asked++];
    if (answer) return answer as Answer<T>;
    await this.#write({ path: this.#path('ask'), json: question });
    // The server released the lease with the question: nothing more is this run's to write.
    this.#parked = true;
    this.stopBeating();
    throw new AskedForInput(this.taskId);
  }

  /** The run's last write (complete, fail, release): not cut short by the job's signal. */
  finish<T>(what: 'complete' | 'fail' | 'release', json?: unknown): Promise<T> {
    return this.#http.call<T>({ path: this.#path(what), json, leaseToken: this.#token });
  }

  async #write<T>(c: Call): Promise<T> {
    if (this.#parked) throw new Error(`task ${this.taskId} asked for input: this run writes nothing more`);
    if (this.signal.aborted) {
      throw Object.assign(new Error(`task ${this.taskId} was stopped (${this.signal.reason})`), {
        name: 'AbortError',
      });
    }
    try {
      const answer = await this.#http.call<T & Partial<Lease>>({
        ...c,
        leaseToken: this.#token,
        signal: this.signal,
      });
      this.#heard(answer);
      return answer;
    } catch (err) {
      if (isLeaseLost(err)) this.abort('lease-lost');
      throw err;
    }
  }

  #heard(lease: Partial<Lease>): void {
    if (lease.state === 'canceled') this.abort('cancel');
    // The heartbeat is what ends a task whose owner asked to cancel it: send one now.
    else if (lease.cancelRequested && !this.signal.aborted) void this.beat();
  }

  #path(what: string): string {
    return `/jobs/${encodeURIComponent(this.taskId)}/${what}`;
  }
}
