import type { TaskView } from '../../engine/task.js';

/**
 * The id of the artifact that is the result as one file, when it is one: a single artifact whose
 * parts are all bytes (`raw`), text (the chunks of one streamed file) or a link to such a file
 * stored out of line. Undefined otherwise.
 */
export function singleFile(view: TaskView): string | undefined {
  if (view.artifacts.length !== 1) return undefined;
  const [artifact] = view.artifacts;
  if (!artifact || artifact.parts.length === 0) return undefined;
  const file = artifact.parts.every(
    (p) => p.raw !== undefined || p.text !== undefined || p.url !== undefined,
  );
  return file ? artifact.artifactId : undefined;
}
