import type { TaskView } from '../../engine/task.js';

export interface FileDownload {
  bytes: Buffer;
  mediaType: string;
  filename: string;
}

/**
 * The result as one file, when it is one: a single artifact whose parts are all bytes (`raw`) or
 * text (the chunks of one streamed file). Undefined otherwise.
 */
export function download(view: TaskView): FileDownload | undefined {
  if (view.artifacts.length !== 1) return undefined;
  const [artifact] = view.artifacts;
  if (!artifact || artifact.parts.length === 0) return undefined;
  if (!artifact.parts.every((p) => p.raw !== undefined || p.text !== undefined)) return undefined;
  const bytes = Buffer.concat(
    artifact.parts.map((p) =>
      p.raw !== undefined ? Buffer.from(p.raw, 'base64') : Buffer.from(p.text ?? ''),
    ),
  );
  const first = artifact.parts[0];
  return {
    bytes,
    mediaType: first?.mediaType ?? (first?.raw !== undefined ? 'application/octet-stream' : 'text/plain'),
    filename: first?.filename ?? artifact.name ?? `${artifact.artifactId}.bin`,
  };
}
