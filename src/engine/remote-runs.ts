import type { Logger } from 'pino';
import {
  type ArtifactsSoFar,
  ArtifactTally,
  artifactCap,
  artifactsSoFar,
  planArtifact,
  replyArtifact,
  storageOf,
  tooLarge,
} from './artifact-write.js';
import { foldArtifacts } from './artifacts.js';
import { ClaimDesk, type ClaimRequest } from './claim-desk.js';
import { EngineError, isJobError, JobError } from './errors.js';
import type { LoggedEvent } from './events.js';
import { normalizeApprovers } from './grant.js';
import { announceClaim, atRunStart, HeldTask, type HoldRules } from './held-task.js';
import type { ArtifactUpdate } from './skill.js';
import { BLOB_PIECE_BYTES, type GuardedWrite, isQuotaExceeded, type WriteResult } from './store-port.js';
import type { Message, Progress, TaskRecord, TaskState } from './task.js';
import { historyOf } from './view.js';

export interface RemoteRunsOptions extends HoldRules {
  /** How long a claim holds its task without a heartbeat (LEASE_MS). */
  leaseMs: number;
  /** How often waiting claims look again besides wake-ups (expired leases, due retries). */
  pollMs: number;
  /** Claims one holder may have waiting at once (MAX_WAITING_CLAIMS). */
  maxWaitingClaims: number;
  logger: Logger;
}

/** A worker's claim, with the name its leases are held under. */
export interface WorkerClaim extends ClaimRequest {
  /** Who holds the leases (the worker's name and principal), as the store records it. */
  worker: string;
}

/** A task claimed for a worker: the record, the answers so far, and the lease. */
export interface ClaimedJob {
  record: TaskRecord;
  /** The caller's messages: the one that made the task, then the answers, oldest first. */
  fromCaller: Message[];
  leaseToken: string;
  leaseExpiresAt: number;
  /** The previous holder died (or released it): this run takes it over. */
  interrupted: boolean;
}

/** Where a held task stands after a worker's write. */
export interface LeaseState {
  taskId: string;
  state: TaskState;
  /** Until when the lease holds (heartbeats say). */
  leaseExpiresAt?: number;
  cancelRequested: boolean;
}

/** Remote runs whose artifacts are kept counted between a worker's calls, at most; past it the oldest goes. */
export const TALLIES_KEPT = 1_000;

/**
 * A remote run's artifacts as counted after its last artifact write on this instance: good while
 * the task's log still ends where that write left it (`lastSeq`) under the same lease.
 */
interface KeptTally {
  leaseToken: string;
  lastSeq: number;
  tally: ArtifactTally;
}

/** Counts an artifact write (or an upload's piece) the store made as `result` into the kept tally. */
function counted(kept: KeptTally, write: Parameters<ArtifactTally['wrote']>[0], result: WriteResult): void {
  kept.tally.wrote(write, result.events[0]?.seq ?? result.record.lastSeq);
  kept.lastSeq = result.record.lastSeq;
}

/** What a worker's question asks. */
export interface RemoteQuestion {
  prompt: string;
  /** The answer's JSON Schema (shown to whoever answers; a worker validates what it gets). */
  schema?: Record<string, unknown>;
  approvers?: readonly string[];
  deadlineMs?: number;
}

/** How a worker's run ends well. */
export interface RemoteOutcome {
  /** The final status message's text. */
  message?: string;
  state?: 'completed' | 'rejected';
  artifacts?: readonly ArtifactUpdate[];
}

/** A file streamed into an artifact. */
export interface Upload {
  artifactId: string;
  name?: string;
  filename?: string;
  mediaType?: string;
  /** Add to the artifact rather than replace it. */
  append?: boolean;
}

/** The lease a worker wrote with holds its task no longer: nothing was written. */
export class LeaseLost extends Error {
  override readonly name = 'LeaseLost';
  constructor(taskId: string) {
    super(
      `This lease no longer holds task ${taskId}: it was canceled, expired, finished or taken over by another worker after the lease ran out. Stop working on it.`,
    );
  }
}

/** An artifact the task cannot keep (too large, over the owner's quota): the task failed saying so. */
export class ArtifactRefused extends Error {
  override readonly name = 'ArtifactRefused';
}

/**
 * Runs on remote workers (docs/workers.md): claims for workers, long-polled on a {@link ClaimDesk},
 * and every write a worker makes to a task it holds, each guarded by the lease token it was given.
 * Nothing is kept between requests: any instance sharing the store serves any worker's next call.
 * The endings are the in-process runner's own ({@link HeldTask}).
 *
 * @example
 *   const runs = new RemoteRuns({ engine, journal, maxInterruptions: 3, leaseMs: 30_000, pollMs: 1000, logger });
 *   runs.start();
 *   const [job] = await runs.claim({ worker: 'gpu-1 (acme/worker)', skills: ['resize'], max: 1, waitMs: 30_000 });
 *   await runs.complete(job.record.id, job.leaseToken, { message });
 */
export class RemoteRuns {
  readonly #o: RemoteRunsOptions;
  readonly #desk: ClaimDesk<WorkerClaim, ClaimedJob>;
  /** Each remote run's artifacts as counted after its last artifact write here (see #tallyOf). */
  readonly #tallies = new Map<string, KeptTally>();
  readonly #unlisten: (() => void)[] = [];

  constructor(options: RemoteRunsOptions) {
    this.#o = options;
    this.#desk = new ClaimDesk<WorkerClaim, ClaimedJob>(
      (r) => this.#take(r),
      (jobs) => this.#giveBack(jobs),
      { pollMs: options.pollMs, maxWaiting: options.maxWaitingClaims },
    );
  }

  /** The remote skills' ids: what workers may claim. */
  get skills(): readonly string[] {
    return this.#o.engine.skills.remote;
  }

  /** Claims waiting now, per skill they wait for. */
  waitingBySkill(): Map<string, number> {
    return this.#desk.waitingBySkill();
  }

  /** Wakes waiting claims whenever a task may have become claimable, here or on another instance. */
  start(): void {
    const { journal } = this.#o;
    const wake = () => this.#desk.wake();
    this.#unlisten.push(journal.onQueued(wake));
    this.#unlisten.push(journal.onStatus((_id, state) => state === 'submitted' && wake()));
  }

  /** Ends waiting claims with nothing; later claims get nothing. */
  stop(): void {
    for (const unlisten of this.#unlisten.splice(0)) unlisten();
    this.#desk.close();
  }

  /** Tasks for a worker: claimable ones at once, else the first within the claim's wait. */
  async claim(claim: WorkerClaim): Promise<ClaimedJob[]> {
    const started = performance.now();
    const jobs = await this.#desk.claim(claim);
    this.#o.journal.observer.workerClaimed(jobs.length, performance.now() - started);
    return jobs;
  }

  /** Extends the lease; a cancel its owner asked for ends the task now (canceled), and says so. */
  async heartbeat(taskId: string, leaseToken: string): Promise<LeaseState> {
    const { journal, leaseMs } = this.#o;
    const now = journal.now();
    const until = now + leaseMs;
    const lease = await journal.store.renewLease(taskId, leaseToken, now, until);
    if (!lease.held) throw this.#lost(taskId);
    if (!lease.cancelRequested) {
      return { taskId, state: 'working', leaseExpiresAt: until, cancelRequested: false };
    }
    const held = await this.#held(taskId, leaseToken);
    if (!(await held.cancel())) throw this.#lost(taskId);
    return { taskId, state: 'canceled', cancelRequested: true };
  }

  progress(taskId: string, leaseToken: string, progress: Progress): Promise<LeaseState> {
    return this.#write(taskId, leaseToken, { progress, events: [{ kind: 'progress', progress }] });
  }

  /** An agent message while working (the task stays working). */
  async say(taskId: string, leaseToken: string, text: string): Promise<LeaseState> {
    const held = await this.#held(taskId, leaseToken);
    return this.#commit(held, { to: 'working', statusMessage: held.text(text), events: [] });
  }

  /** Writes (or appends to) an artifact; one the task cannot keep fails the task (ArtifactRefused). */
  async artifact(
    taskId: string,
    leaseToken: string,
    update: ArtifactUpdate,
  ): Promise<{ artifactId: string } & LeaseState> {
    const held = await this.#held(taskId, leaseToken);
    const { artifactId } = await this.#writeArtifact(held, update, held.record.lastSeq);
    return { artifactId, ...this.#stateOf(held.record) };
  }

  /**
   * Streams a file into an artifact, a stored piece at a time: the server holds at most two pieces
   * (1 MiB each) whatever the file's size. Each piece is an artifact chunk stored beside the log;
   * callers see the artifact as one file.
   */
  async upload(
    taskId: string,
    leaseToken: string,
    upload: Upload,
    body: AsyncIterable<Uint8Array>,
  ): Promise<{ artifactId: string; bytes: number } & LeaseState> {
    const held = await this.#held(taskId, leaseToken);
    const kept = await this.#tallyOf(held, held.record.lastSeq);
    const { engine } = this.#o;
    const { artifactId, append = false, ...about } = upload;
    const before = append ? (kept.tally.bytes.get(artifactId) ?? 0) : 0;
    // Uploaded again (not appended): the first piece replaces what the artifact held beside the log.
    const replaced = append ? undefined : kept.tally.stored.get(artifactId);
    const max = artifactCap(engine.limits, engine.skills.get(held.record.skill)?.maxArtifactBytes);
    let bytes = 0;
    let written = 0;
    let chunks = 0;
    let state = this.#stateOf(held.record);
    const writePiece = async (piece: Buffer, lastChunk: boolean) => {
      const part = {
        filename: about.filename,
        mediaType: about.mediaType,
        blob: { kind: 'raw' as const, size: piece.length },
      };
      const result = await this.#written(held, {
        events: [
          {
            kind: 'artifact',
            artifact: { artifactId, name: about.name, parts: [part] },
            append: append || chunks > 0,
            lastChunk,
          },
        ],
        blobs: [piece],
        ...(chunks === 0 && replaced
          ? {
              storage: storageOf(held.record.owner, piece.length - replaced.bytes, engine.limits),
              dropBlobs: replaced.seqs,
            }
          : { storage: storageOf(held.record.owner, piece.length, engine.limits) }),
      }).catch((err: unknown) => this.#refusedArtifact(held, err));
      written += piece.length;
      // Each piece counted as it is written: the next write of this run reads no log.
      counted(
        kept,
        {
          artifactId,
          bytes: before + written,
          inlineAdded: 0,
          storedAdded: piece.length,
          append: append || chunks > 0,
        },
        result,
      );
      state = this.#stateOf(result.record);
      chunks++;
    };
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let full: Buffer | undefined; // a whole piece, written once the next byte shows it is not the last
    for await (const chunk of body) {
      bytes += chunk.length;
      if (before + bytes > max) await this.#refusedArtifact(held, tooLarge(artifactId, before + bytes, max));
      let data = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
      while (data.length > 0) {
        const take = Math.min(BLOB_PIECE_BYTES - pendingBytes, data.length);
        pending.push(data.subarray(0, take));
        pendingBytes += take;
        data = data.subarray(take);
        if (pendingBytes === BLOB_PIECE_BYTES) {
          if (full) await writePiece(full, false);
          full = Buffer.concat(pending);
          pending = [];
          pendingBytes = 0;
        }
      }
    }
    if (full && pendingBytes === 0) await writePiece(full, true);
    else {
      if (full) await writePiece(full, false);
      await writePiece(Buffer.concat(pending), true);
    }
    return { artifactId, bytes, ...state };
  }

  /**
   * Parks the task on the worker's question (input-required, the lease released), as `ctx.ask`
   * does: 'submitted' when an answer came while the run worked (it is queued again at once).
   */
  async ask(taskId: string, leaseToken: string, q: RemoteQuestion): Promise<'input-required' | 'submitted'> {
    const checked = normalizeApprovers(q.approvers ?? []);
    if ('problem' in checked) throw new EngineError('invalid-params', checked.problem);
    const approvers = checked.names;
    const held = await this.#held(taskId, leaseToken);
    const seen = await this.#answersAtStart(held);
    const state = await held.park(
      { prompt: q.prompt, approvers, deadlineMs: q.deadlineMs, answerSchema: q.schema },
      seen + 1,
    );
    if (!state) throw this.#lost(taskId);
    return state;
  }

  /** Ends the run: its artifacts first, then the final state and message. */
  async complete(taskId: string, leaseToken: string, outcome: RemoteOutcome): Promise<TaskState> {
    const state = outcome.state ?? 'completed';
    // The log is read (with the task, in one read) only when the reply may be the task's result: no
    // artifact came with it.
    const mayReply = state === 'completed' && outcome.message !== undefined && !outcome.artifacts?.length;
    const { held, soFar } = mayReply
      ? await this.#heldSoFar(taskId, leaseToken)
      : { held: await this.#held(taskId, leaseToken), soFar: undefined };
    let lastSeq = held.record.lastSeq;
    for (const update of outcome.artifacts ?? [])
      ({ lastSeq } = await this.#writeArtifact(held, update, lastSeq));
    this.#tallies.delete(taskId);
    const message = outcome.message === undefined ? undefined : held.text(outcome.message);
    const reply =
      soFar && message
        ? replyArtifact(message, soFar, this.#o.engine.limits, held.record.owner)?.write
        : undefined;
    if (!(await held.finish(state, message, undefined, reply))) throw this.#lost(taskId);
    return state;
  }

  /**
   * Fails the run with the worker's words for the task's owner, or queues it again when the skill's
   * retry policy retries it (`retryable`, or a `code` its retryOn lists).
   */
  async fail(
    taskId: string,
    leaseToken: string,
    failure: { message: string; code?: string; retryable?: boolean },
  ): Promise<{ state: TaskState; retryAt?: number }> {
    const held = await this.#held(taskId, leaseToken);
    const err = new JobError(failure.message, failure.code, { transient: failure.retryable });
    const outcome = await held.fail(err, failure.message);
    if (!outcome) throw this.#lost(taskId);
    return outcome;
  }

  /** Gives the task back: the next claim takes it over at once (not counted as an interruption). */
  async release(taskId: string, leaseToken: string): Promise<LeaseState> {
    const { journal } = this.#o;
    const now = journal.now();
    // Checked first: a token that holds nothing must be told so, not answered as if released.
    if (!(await journal.store.renewLease(taskId, leaseToken, now, now)).held) throw this.#lost(taskId);
    const held = await this.#held(taskId, leaseToken);
    await held.release();
    this.#desk.wake();
    return this.#stateOf(held.record);
  }

  async #take(claim: WorkerClaim): Promise<ClaimedJob[]> {
    const { engine, journal, leaseMs, logger } = this.#o;
    for (;;) {
      const now = journal.now();
      const claimed = await journal.store.claim(claim.worker, now, leaseMs, claim.max, engine.claimPolicy, {
        only: claim.skills,
      });
      const jobs: ClaimedJob[] = [];
      for (const c of claimed) {
        announceClaim(journal, c, now);
        const { skill, attempts } = c.record;
        const log = logger.child({ taskId: c.record.id, skill, attempt: attempts, worker: claim.worker });
        const held = new HeldTask(this.#o, c, log);
        if (!(await held.takeOver(c.interrupted))) continue;
        const found = await atRunStart(journal, c).catch(() => undefined);
        if (!found) continue; // expired meanwhile
        jobs.push({
          record: found.record,
          fromCaller: historyOf(found.record, found.log).filter((m) => m.role === 'ROLE_USER'),
          leaseToken: c.leaseToken,
          leaseExpiresAt: now + leaseMs,
          interrupted: c.interrupted,
        });
      }
      // Every task claimed was failed instead (crash loops, onInterrupt: 'fail'): look again.
      if (claimed.length === 0 || jobs.length > 0) return jobs;
    }
  }

  async #giveBack(jobs: ClaimedJob[]): Promise<void> {
    const { journal } = this.#o;
    await Promise.all(jobs.map((j) => journal.store.releaseLease(j.record.id, j.leaseToken)));
    this.#desk.wake();
  }

  /** The task `leaseToken` claims to hold, as a HeldTask; LeaseLost when it is not working. */
  async #held(taskId: string, leaseToken: string): Promise<HeldTask> {
    const { journal } = this.#o;
    const record = await journal.store.getTask(taskId, journal.now());
    if (record?.state !== 'working') throw this.#lost(taskId);
    return this.#holding(record, leaseToken);
  }

  /** The held task and the artifacts its log holds so far, from one read of both. */
  async #heldSoFar(taskId: string, leaseToken: string): Promise<{ held: HeldTask; soFar: ArtifactsSoFar }> {
    const { journal } = this.#o;
    // A run that wrote artifacts here has them counted: the record alone says whether that still holds.
    if (this.#tallies.get(taskId)?.leaseToken === leaseToken) {
      const held = await this.#held(taskId, leaseToken);
      return { held, soFar: (await this.#tallyOf(held, held.record.lastSeq)).tally };
    }
    const found = await journal.store.getTaskWithLog(taskId, journal.now());
    if (found?.record.state !== 'working') throw this.#lost(taskId);
    return { held: this.#holding(found.record, leaseToken), soFar: soFarOf(found.log) };
  }

  #holding(record: TaskRecord, leaseToken: string): HeldTask {
    const log = this.#o.logger.child({ taskId: record.id, skill: record.skill, attempt: record.attempts });
    return new HeldTask(this.#o, { record, leaseToken }, log);
  }

  async #write(
    taskId: string,
    leaseToken: string,
    w: Omit<GuardedWrite, 'taskId' | 'from' | 'at'>,
  ): Promise<LeaseState> {
    return this.#commit(await this.#held(taskId, leaseToken), w);
  }

  /** A write of the held task, guarded by its lease; LeaseLost when it no longer holds. */
  async #commit(held: HeldTask, w: Omit<GuardedWrite, 'taskId' | 'from' | 'at'>): Promise<LeaseState> {
    return this.#stateOf((await this.#written(held, w)).record);
  }

  /** {@link #commit}, resolving with what the store wrote. */
  async #written(held: HeldTask, w: Omit<GuardedWrite, 'taskId' | 'from' | 'at'>): Promise<WriteResult> {
    const { journal } = this.#o;
    const result: WriteResult | undefined = await journal.commit({
      ...w,
      taskId: held.record.id,
      from: ['working'],
      leaseToken: held.leaseToken,
      at: journal.now(),
    });
    if (!result) throw this.#lost(held.record.id);
    return result;
  }

  /**
   * Writes one artifact update of the held task, whose log ends at `lastSeq` as far as the caller
   * knows; resolves with the artifact's id and where the log ends after the write.
   */
  async #writeArtifact(
    held: HeldTask,
    update: ArtifactUpdate,
    lastSeq: number,
  ): Promise<{ artifactId: string; lastSeq: number }> {
    const { engine } = this.#o;
    const kept = await this.#tallyOf(held, lastSeq);
    let plan: ReturnType<typeof planArtifact>;
    try {
      plan = planArtifact(update, kept.tally, engine.limits, {
        owner: held.record.owner,
        maxArtifactBytes: engine.skills.get(held.record.skill)?.maxArtifactBytes,
      });
    } catch (err) {
      return this.#refusedArtifact(held, err);
    }
    const result = await this.#written(held, plan.write).catch((err: unknown) =>
      this.#refusedArtifact(held, err),
    );
    counted(kept, plan, result);
    return { artifactId: plan.artifactId, lastSeq: kept.lastSeq };
  }

  /**
   * The task's artifacts as its log holds them now: as counted after this run's last artifact write
   * here when nothing was written since, else read from the log. A worker appending chunk after chunk
   * read the whole log, which each chunk made longer, before every one of them.
   */
  async #tallyOf(held: HeldTask, lastSeq: number): Promise<KeptTally> {
    const { journal } = this.#o;
    const id = held.record.id;
    const kept = this.#tallies.get(id);
    if (kept?.leaseToken === held.leaseToken && kept.lastSeq === lastSeq) return kept;
    const found = await journal.store.getTaskWithLog(id, journal.now());
    if (!found) throw this.#lost(id);
    const fresh = {
      leaseToken: held.leaseToken,
      lastSeq: found.record.lastSeq,
      tally: new ArtifactTally(soFarOf(found.log)),
    };
    this.#tallies.delete(id);
    this.#tallies.set(id, fresh);
    if (this.#tallies.size > TALLIES_KEPT) this.#tallies.delete(this.#tallies.keys().next().value as string);
    return fresh;
  }

  /**
   * An artifact the task cannot keep fails it, as an in-process job fails on it: the owner reads
   * why, and the worker is told (ArtifactRefused). Any other error goes on as it is.
   */
  async #refusedArtifact(held: HeldTask, err: unknown): Promise<never> {
    if (!(isJobError(err) && err.code === 'artifact-too-large') && !isQuotaExceeded(err)) throw err;
    if (isQuotaExceeded(err)) this.#o.journal.observer.refused('storage-quota');
    await held.fail(err, err.message);
    throw new ArtifactRefused(`${err.message}; the task failed`);
  }

  /** The run's answers it was claimed with: the caller's messages after the first, before the run began. */
  async #answersAtStart(held: HeldTask): Promise<number> {
    const { journal } = this.#o;
    const found = await journal.store.getTaskWithLog(held.record.id, journal.now());
    if (!found) throw this.#lost(held.record.id);
    // The run began where the task last became working from another state (its claim).
    let startSeq = 0;
    let state: TaskState | undefined;
    for (const { event, seq } of found.log) {
      if (event.kind !== 'status') continue;
      if (event.state === 'working' && state !== 'working') startSeq = seq;
      state = event.state;
    }
    const before = found.log.filter(
      (e) => e.seq < startSeq && e.event.kind === 'message' && e.event.message.role === 'ROLE_USER',
    );
    return Math.max(0, before.length - 1);
  }

  /** The refusal of a write whose lease no longer holds, counted. */
  #lost(taskId: string): LeaseLost {
    this.#o.journal.observer.leaseLost();
    return new LeaseLost(taskId);
  }

  #stateOf(record: TaskRecord): LeaseState {
    return { taskId: record.id, state: record.state, cancelRequested: record.cancelRequested };
  }
}

/** What the artifacts of a task's log hold so far (bytes, stored pieces), as artifact writes check. */
const soFarOf = (log: readonly LoggedEvent[]): ArtifactsSoFar => artifactsSoFar(foldArtifacts(log).values());
