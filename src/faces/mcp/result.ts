import { REPLY_ARTIFACT } from '../../engine/artifact-write.js';
import { ARTIFACT_BYTES, type ArtifactLink } from '../../engine/artifacts.js';
import type { Artifact, Part, TaskRecord, TaskView } from '../../engine/task.js';
import { messageText } from '../handle.js';
import { CODE } from './jsonrpc.js';

/** MCP content blocks this face writes (a subset of the CallToolResult content union). */
type Content =
  | { type: 'text'; text: string }
  | { type: 'resource_link'; uri: string; name: string; mimeType?: string; size?: number }
  | {
      type: 'resource';
      resource: { uri: string; mimeType?: string } & ({ text: string } | { blob: string });
    };

export interface CallToolResult {
  content: Content[];
  isError: boolean;
}

const TEXTUAL = /^(text\/|application\/(json|x-ndjson|ndjson|csv|xml|yaml)\b)|\+json$|\+xml$/;

/**
 * The CallToolResult of a finished task: its final message, then its artifacts. An artifact stored
 * by reference (past INLINE_ARTIFACT_BYTES) is a `resource_link` to the authenticated download route,
 * so the answer holds a link, never the stored bytes; a small inline file is an embedded resource.
 * `rejected` is a result that is an error (the tool answered no).
 */
export function callToolResult(view: TaskView, link: ArtifactLink): CallToolResult {
  const { record } = view;
  const content: Content[] = [];
  const said = messageText(record.statusMessage);
  if (said) content.push({ type: 'text', text: said });
  for (const artifact of view.artifacts) {
    // The reply written as the task's result artifact is the text just given: not twice.
    if (said && artifact.metadata?.[REPLY_ARTIFACT]) continue;
    content.push(...artifactContent(record.id, artifact, link));
  }
  if (content.length === 0) content.push({ type: 'text', text: `Task ${record.id} ${record.state}` });
  return { content, isError: record.state !== 'completed' };
}

function artifactContent(taskId: string, a: Artifact, link: ArtifactLink): Content[] {
  const uri = link(taskId, a.artifactId);
  const raw = a.parts.filter((p) => p.raw !== undefined);
  const out: Content[] = [];
  // The chunks of one streamed file (export's appends) are one resource, not one block per chunk.
  if (raw.length > 0) {
    const bytes = Buffer.concat(raw.map((p) => Buffer.from(p.raw ?? '', 'base64')));
    const mimeType = raw[0]?.mediaType ?? 'application/octet-stream';
    out.push({
      type: 'resource',
      resource: TEXTUAL.test(mimeType)
        ? { uri, mimeType, text: bytes.toString('utf8') }
        : { uri, mimeType, blob: bytes.toString('base64') },
    });
  }
  for (const p of a.parts) if (p.raw === undefined) out.push(partContent(p, a));
  return out;
}

function partContent(p: Part, a: Artifact): Content {
  if (p.url !== undefined) {
    const size = p.metadata?.[ARTIFACT_BYTES];
    return {
      type: 'resource_link',
      uri: p.url,
      name: p.filename ?? a.name ?? a.artifactId,
      ...(p.mediaType ? { mimeType: p.mediaType } : {}),
      ...(typeof size === 'number' ? { size } : {}),
    };
  }
  if (p.text !== undefined) return { type: 'text', text: p.text };
  return { type: 'text', text: JSON.stringify(p.data ?? null) };
}

/**
 * The JSON-RPC error a task that ended without a result stands for: `failed` (its message says why,
 * in the caller's terms: the engine never stores an internal error's words) or `cancelled`.
 */
export function taskError(r: TaskRecord): { code: number; message: string } {
  const said = messageText(r.statusMessage);
  if (r.state === 'canceled')
    return { code: CODE.invalidRequest, message: `Task ${r.id} was cancelled; it has no result` };
  return { code: CODE.internalError, message: said || `Task ${r.id} failed` };
}
