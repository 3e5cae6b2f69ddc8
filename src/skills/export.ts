import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { type ArtifactUpdate, defineSkill } from '../engine/skill.js';
import { Approval, Decision } from './decision.js';
import { FORMATS, generatedRow, type Row, serialize } from './rows.js';

/** Rows made and serialized at once. */
const BATCH_ROWS = 1000;
/** A chunk is written in pieces of about this many characters (one stored blob piece). */
const WRITE_BYTES = 2 ** 20;

const Input = z.strictObject({
  /** Rows to generate (ignored when `data` is given). */
  rows: z.number().int().min(0).max(100_000_000).default(1000),
  format: z.enum(['csv', 'ndjson']).default('csv'),
  /** Rows per artifact chunk (and per progress report); a chunk past 1 MiB is appended in 1 MiB writes. */
  chunkRows: z.number().int().min(1).max(100_000).default(5000),
  /** Pause after each chunk: stands in for a slow source (a database, a remote API). */
  delayMs: z.number().int().min(0).max(600_000).default(0),
  /** Rows to export instead of generated ones. */
  data: z.array(z.record(z.string(), z.unknown())).max(100_000).optional(),
  /** Exports of more rows than this wait for an approver's sign-off first. */
  approvalOverRows: z.number().int().min(0).optional(),
  approval: Approval.optional(),
});

/**
 * Exports rows to a CSV or NDJSON file artifact, streamed in chunks (each chunk appended to the
 * same artifact) with progress. Deterministic, so a run interrupted by a crash is simply re-run.
 */
export const exportSkill = defineSkill({
  id: 'export',
  name: 'Export rows',
  description:
    'Exports N generated rows (or the rows you supply) to a CSV or NDJSON file artifact, streamed in chunks with progress.',
  tags: ['export', 'csv', 'ndjson', 'batch'],
  examples: ['export 5000 rows', '{"skill":"export","input":{"rows":100000,"format":"ndjson"}}'],
  input: Input,
  inputFromText: (text) => {
    const rows = /(\d[\d_,]*)/.exec(text)?.[1]?.replace(/[_,]/g, '');
    return {
      ...(rows ? { rows: Number(rows) } : {}),
      ...(/\b(nd)?json\b/i.test(text) ? { format: 'ndjson' } : {}),
    };
  },
  pollIntervalMs: 2000,
  ttlMs: 7 * 86_400_000,
  onInterrupt: 'rerun',
  async run(ctx) {
    const { format, chunkRows, delayMs, data } = ctx.input;
    const total = data?.length ?? ctx.input.rows;
    const { approvalOverRows, approval } = ctx.input;
    if (approvalOverRows !== undefined && total > approvalOverRows) {
      const { value, from } = await ctx.ask({
        prompt: `Approve exporting ${total} rows as ${format.toUpperCase()}? (more than ${approvalOverRows} need sign-off) Answer "approve" or "reject".`,
        schema: Decision,
        approvers: approval?.approver ? [approval.approver] : [],
        deadlineMs: approval?.deadlineHours === undefined ? undefined : approval.deadlineHours * 3_600_000,
      });
      if (value.decision === 'reject') return { state: 'rejected', message: `Export rejected by ${from}` };
    }
    const columns = data ? [...new Set(data.flatMap((r) => Object.keys(r)))] : Object.keys(generatedRow(0));
    const { mediaType, extension } = FORMATS[format];
    const filename = `export.${extension}`;
    const artifactId = `export-${ctx.taskId}`;
    let writes = 0;
    let pending = '';
    const chunk = (lastChunk: boolean): ArtifactUpdate => {
      const update = {
        artifactId,
        name: filename,
        description: `${total} rows as ${format.toUpperCase()}`,
        parts: [{ raw: Buffer.from(pending).toString('base64'), filename, mediaType }],
        append: writes++ > 0,
        lastChunk,
      };
      pending = '';
      return update;
    };
    let done = 0;
    for (;;) {
      ctx.signal.throwIfAborted();
      const count = Math.min(chunkRows, total - done);
      // Rows are made and serialized a batch at a time, and a chunk larger than a piece is written
      // in pieces: what the job holds follows WRITE_BYTES, not chunkRows.
      for (let at = 0; at < count; at += BATCH_ROWS) {
        const from = done + at;
        const n = Math.min(BATCH_ROWS, count - at);
        const rows: Row[] = data
          ? data.slice(from, from + n)
          : Array.from({ length: n }, (_, i) => generatedRow(from + i));
        pending += serialize(rows, format, columns, from === 0);
        if (pending.length >= WRITE_BYTES && at + n < count) await ctx.artifact(chunk(false));
      }
      if (count === 0) pending += serialize([], format, columns, done === 0);
      done += count;
      const progress = {
        percent: total === 0 ? 100 : Math.floor((done / total) * 100),
        message: `${done} of ${total} rows`,
      };
      // The last chunk and the last progress are written with the completion, in one commit.
      if (done >= total)
        return { message: `Exported ${total} rows to ${filename}`, artifact: chunk(true), progress };
      await ctx.artifact(chunk(false));
      await ctx.progress(progress);
      if (delayMs > 0) await sleep(delayMs, undefined, { signal: ctx.signal });
    }
  },
});
