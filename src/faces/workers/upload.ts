import type { Request, Response } from 'express';
import type { Upload } from '../../engine/remote-runs.js';
import { parsed } from '../http/json-body.js';
import { type Handler, Refused } from '../http/route.js';
import type { WorkersOptions } from './options.js';
import { ARTIFACT_ID_PATTERN, UploadQuery } from './requests.js';
import { leaseOf } from './respond.js';

const MEDIA_TYPE = /^[\w.+-]+\/[\w.+-]+(\s*;.*)?$/;

/**
 * `PUT /v1/workers/jobs/{taskId}/artifacts/{artifactId}`: the request body is the file, streamed
 * into the artifact a stored piece at a time (never held whole). `Content-Type` is its media type;
 * query `name`, `filename`, `append=true`.
 */
export const upload =
  (o: WorkersOptions): Handler =>
  async (req, res) => {
    const { taskId, token } = leaseOf(req);
    // A refusal mid-file leaves the request undestroyed, for lingerThenClose to read to its end.
    const body = req.iterator({ destroyOnReturn: false });
    const written = await o.runs.upload(taskId, token, uploadOf(req, res), body).catch((err: unknown) => {
      // The worker hung up mid-file: a refusal, not a failure of ours (logged as none, as a JSON
      // body cut short is). What was stored stays; a PUT of the whole file replaces it.
      if (!req.complete && (err as { code?: unknown })?.code === 'ECONNRESET') {
        throw new Refused(400, 'The upload was closed before its body ended; PUT the whole file again');
      }
      if (!req.readableEnded) lingerThenClose(req, res);
      throw err;
    });
    res.json(written);
  };

/** How long a refused upload's sender is read (and dropped) after its answer, before it is cut off. */
const LINGER_MS = 5_000;

/**
 * A refusal before the file's end: what the worker still sends is read and dropped once the answer
 * has gone, not left unread behind a closed socket, which the kernel resets, and a reset may reach the worker before the answer does (it then
 * sees no 413, only ECONNRESET). The worker stops sending once it reads the answer; a sender that
 * never stops is cut off after {@link LINGER_MS}.
 */
function lingerThenClose(req: Request, res: Response): void {
  res.once('finish', () => {
    if (req.readableEnded) return;
    // Read on: Node drains a request answered early only if nothing had begun reading it.
    req.resume();
    const cutOff = setTimeout(() => req.socket.destroy(), LINGER_MS).unref();
    req.once('close', () => clearTimeout(cutOff));
  });
}

/** The artifact an upload writes, from its path, query and headers; a refusal naming what is wrong. */
function uploadOf(req: Request, res: Response): Upload {
  const artifactId = String(req.params.artifactId);
  if (!ARTIFACT_ID_PATTERN.test(artifactId)) {
    throw new Refused(400, 'The artifact id must be 1 to 128 letters, digits, ".", "_", ":" or "-"');
  }
  const query = parsed(UploadQuery, { ...req.query }, 'Query: name?, filename?, append=true|false');
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding !== 'identity') {
    lingerThenClose(req, res);
    throw new Refused(415, 'Send the file uncompressed (no Content-Encoding)');
  }
  const type = req.headers['content-type'];
  if (type !== undefined && (type.length > 255 || !MEDIA_TYPE.test(type))) {
    throw new Refused(400, 'Content-Type must be a media type (type/subtype)');
  }
  return {
    artifactId,
    name: query.name,
    filename: query.filename,
    mediaType: type,
    append: query.append === 'true',
  };
}
