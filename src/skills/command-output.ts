import { isJobError } from '../engine/errors.js';
import type { SkillContext } from '../engine/skill.js';
import type { Input } from './command-spec.js';

const FLUSH_MS = 200;
const FLUSH_BYTES = 64 * 1024;
/** Output held while a write is in flight before the command's pipes are paused. */
const BACKLOG_BYTES = 1024 * 1024;
export const TAIL_LINES = 20;
export const TAIL_BYTES = 2048;

/**
 * stdout and stderr, interleaved as they come, written as one chunked `output.log` artifact: at
 * most one chunk per 200 ms or 64 KiB, so a chatty command does not write an event per line.
 */
export class OutputLog {
  readonly #ctx: SkillContext<Input>;
  readonly #artifactId: string;
  readonly #progress: (bytes: number) => string;
  readonly #streams: NodeJS.ReadableStream[] = [];
  #buffer: string[] = [];
  #buffered = 0;
  #timer: NodeJS.Timeout | undefined;
  #writing: Promise<void> = Promise.resolve();
  #written = 0;
  #bytes = 0;
  #tail = '';
  /** Bytes handed to writes not yet done. */
  pending = 0;
  /** The artifact size limit was reached: the rest of the output only feeds the tail. */
  truncated = false;
  /** A write failed for another reason; the run stops the command and rethrows it. */
  error: unknown;
  onError: () => void = () => {};

  constructor(ctx: SkillContext<Input>, progress: (bytes: number) => string) {
    this.#ctx = ctx;
    this.#artifactId = `output-${ctx.taskId}`;
    this.#progress = progress;
  }

  read(stream: NodeJS.ReadableStream): void {
    stream.setEncoding('utf8');
    stream.on('data', (text: string) => this.#push(text));
    this.#streams.push(stream);
  }

  get bytes(): number {
    return this.#bytes;
  }

  /** The last lines of the output (at most 20 lines and 2 KiB), for the final status message. */
  tail(): string {
    const lines = this.#tail.replace(/\s+$/, '').split('\n').slice(-TAIL_LINES).join('\n');
    return lines.length > TAIL_BYTES ? `…${lines.slice(-TAIL_BYTES)}` : lines;
  }

  #push(text: string): void {
    const size = Buffer.byteLength(text);
    this.#bytes += size;
    this.#tail = (this.#tail + text).slice(-4 * TAIL_BYTES);
    if (this.truncated || this.error !== undefined) return;
    this.#buffer.push(text);
    this.#buffered += size;
    if (this.#buffered >= FLUSH_BYTES) void this.#flush(false);
    else this.#timer ??= setTimeout(() => void this.#flush(false), FLUSH_MS);
  }

  #flush(last: boolean): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const text = this.#buffer.join('');
    const size = this.#buffered;
    this.#buffer = [];
    this.#buffered = 0;
    this.pending += size;
    // The store is slower than the command: stop reading (the pipe then blocks the command) until it catches up.
    if (this.pending > BACKLOG_BYTES) for (const s of this.#streams) s.pause();
    this.#writing = this.#writing.then(async () => {
      await this.#write(text, last);
      this.pending -= size;
      if (this.pending <= BACKLOG_BYTES) for (const s of this.#streams) s.resume();
    });
    return this.#writing;
  }

  async #write(text: string, last: boolean): Promise<void> {
    if (this.error !== undefined) return;
    const chunk = this.truncated ? '' : text;
    if (!chunk && !last) return;
    const write = (t: string) =>
      this.#ctx.artifact({
        artifactId: this.#artifactId,
        name: 'output.log',
        description: 'stdout and stderr of the command',
        parts: [{ text: t }],
        append: this.#written > 0, // a re-run's first chunk replaces what an earlier run wrote
        lastChunk: last,
      });
    try {
      try {
        await write(chunk);
      } catch (err) {
        if (!(isJobError(err) && err.code === 'artifact-too-large')) throw err;
        this.truncated = true;
        if (!last) return;
        await write(''); // adds nothing, so it fits: the artifact still gets its last chunk
      }
      this.#written++;
      if (!last) await this.#ctx.progress({ message: this.#progress(this.#bytes) });
    } catch (err) {
      this.error = err;
      this.onError();
    }
  }

  /** Writes what is left as the last chunk. */
  close(): Promise<void> {
    return this.#flush(true);
  }

  /** Drops what is left (the run was aborted: the task accepts no more writes). */
  dispose(): void {
    clearTimeout(this.#timer);
    this.#buffer = [];
  }
}
