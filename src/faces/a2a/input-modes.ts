import type { AgentCard } from '@a2a-js/sdk';
import { ContentTypeNotSupportedError } from '@a2a-js/sdk/errors';
import type { Message } from '../../engine/task.js';

/**
 * Refuses a message with a part whose media type the agent does not take (spec 3.1.1: "A Media Type
 * provided in the request's message parts that is not supported by the agent MUST result in
 * ContentTypeNotSupportedError"). What it takes is what the card says: the skill's `inputModes`
 * when it lists any, else the card's `defaultInputModes`. Only a media type the caller gave is
 * judged: a part without one is read as its kind says (text, JSON data). A mode may put `*` for its
 * type or subtype (`text/*`); parameters (`; charset=utf-8`) and case do not matter.
 *
 * @example checkInputModes(card, 'export', message) // throws for a part of media type image/png
 */
export function checkInputModes(card: AgentCard, skill: string | undefined, message: Message): void {
  const own = card.skills.find((s) => s.id === skill)?.inputModes;
  const modes = own?.length ? own : card.defaultInputModes;
  if (!modes.length) return;
  message.parts.forEach((part, i) => {
    if (part.mediaType === undefined || part.mediaType === '') return;
    if (modes.some((mode) => accepts(mode, part.mediaType as string))) return;
    throw new ContentTypeNotSupportedError(
      `message.parts[${i}].mediaType ${JSON.stringify(part.mediaType.slice(0, 100))} is not a type this agent takes; send one of ${modes.join(', ')} (the agent card's ${own?.length ? `skill ${skill} inputModes` : 'defaultInputModes'})`,
    );
  });
}

const essence = (type: string) => (type.split(';')[0] ?? '').trim().toLowerCase();

function accepts(mode: string, mediaType: string): boolean {
  const [want = '', wantSub = ''] = essence(mode).split('/');
  const [type = '', sub = ''] = essence(mediaType).split('/');
  return (want === '*' || want === type) && (wantSub === '*' || wantSub === sub);
}
