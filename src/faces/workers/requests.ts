import { z } from 'zod';
import { MAX_APPROVER_NAME, MAX_APPROVERS } from '../../engine/grant.js';

/**
 * The bodies of the worker protocol (docs/workers.md), checked at the edge: types, sizes and counts
 * bounded before anything reaches the engine. The OpenAPI document is made from these same schemas.
 */

const SKILL_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const ARTIFACT_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const TEXT_MAX = 16_384;

export const ClaimBody = z.strictObject({
  skills: z
    .array(z.string().regex(SKILL_ID, 'must be a skill id'))
    .min(1)
    .max(64)
    .optional()
    .meta({ description: 'the remote skills to claim (default: every one this worker may work)' }),
  max: z.number().int().min(1).max(32).default(1).meta({ description: 'at most this many tasks' }),
  waitMs: z
    .number()
    .int()
    .min(0)
    .max(60_000)
    .default(30_000)
    .meta({ description: 'when none is runnable, wait up to this long for one' }),
  worker: z
    .string()
    .regex(
      /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,63}$/,
      'must be 1 to 64 letters, digits, ".", "_", ":", "@" or "-"',
    )
    .optional()
    .meta({ description: 'a name for this worker process, shown beside the tasks it holds' }),
});

export const ProgressBody = z.strictObject({
  percent: z.number().min(0).max(100).optional(),
  message: z.string().max(TEXT_MAX).optional(),
});

export const StatusBody = z.strictObject({ text: z.string().min(1).max(TEXT_MAX) });

const Metadata = z.record(z.string().max(200), z.unknown());

const PartBody = z
  .strictObject({
    text: z.string().optional(),
    raw: z.string().regex(BASE64, 'must be base64').optional(),
    url: z.string().url().max(8192).optional(),
    data: z.unknown().optional(),
    filename: z.string().min(1).max(255).optional(),
    mediaType: z.string().min(1).max(255).optional(),
    metadata: Metadata.optional(),
  })
  .refine(
    (p) => [p.text, p.raw, p.url, p.data].filter((v) => v !== undefined).length === 1,
    'a part holds exactly one of text, raw (base64), url or data',
  );

export const ArtifactBody = z.strictObject({
  artifactId: z
    .string()
    .regex(ARTIFACT_ID, 'must be 1 to 128 letters, digits, ".", "_", ":" or "-"')
    .optional(),
  name: z.string().min(1).max(255).optional(),
  description: z.string().max(TEXT_MAX).optional(),
  parts: z.array(PartBody).min(1).max(64),
  metadata: Metadata.optional(),
  append: z.boolean().optional(),
  lastChunk: z.boolean().optional(),
});

export const AskBody = z.strictObject({
  prompt: z.string().min(1).max(TEXT_MAX),
  schema: z
    .record(z.string(), z.unknown())
    .optional()
    .meta({ description: "the answer's JSON Schema, shown to whoever answers" }),
  approvers: z.array(z.string().min(1).max(MAX_APPROVER_NAME)).max(MAX_APPROVERS).optional(),
  deadlineMs: z
    .number()
    .int()
    .positive()
    .max(366 * 86_400_000)
    .optional(),
});

export const CompleteBody = z.strictObject({
  message: z.string().max(TEXT_MAX).optional(),
  state: z.enum(['completed', 'rejected']).optional(),
  artifacts: z.array(ArtifactBody).max(32).optional(),
});

export const FailBody = z.strictObject({
  message: z.string().min(1).max(TEXT_MAX).meta({ description: "what the task's owner reads" }),
  code: z.string().min(1).max(100).optional(),
  retryable: z.boolean().optional(),
});

/** The query of an upload (`PUT .../artifacts/{artifactId}`). */
export const UploadQuery = z.strictObject({
  name: z.string().min(1).max(255).optional(),
  filename: z.string().min(1).max(255).optional(),
  append: z.enum(['true', 'false']).optional(),
});

export const ARTIFACT_ID_PATTERN = ARTIFACT_ID;
