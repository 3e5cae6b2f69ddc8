import { type GenerationAsk, generationOf } from '../generation.js';

/**
 * The draft's generation fields of an A2A call, read from its params as they came: the SDK's (v1.0)
 * decoders know none of them and drop them. Each under its JSON or proto name. Returns a problem
 * naming the field when one is not a generation.
 *
 * - GetTask (`tasks/get`): `currentGeneration`, the long poll's point (draft 3.2.7).
 * - SendMessage and SendStreamingMessage (`message/send`, `message/stream`):
 *   `configuration.ifGenerationMatch` (draft 3.2.2).
 * - CancelTask (`tasks/cancel`): `ifGenerationMatch` (ours: the draft gives cancel no condition,
 *   and names it as SendMessage does).
 */
export function generationAsk(
  method: string,
  params: unknown,
): { ask: GenerationAsk | undefined } | { problem: string } {
  const p = objectOr(params);
  if (GET.has(method)) {
    const at = generationOf(p.currentGeneration ?? p.current_generation, 'currentGeneration');
    if (typeof at === 'object') return at;
    return { ask: at === undefined ? undefined : { currentGeneration: at } };
  }
  const holder = SEND.has(method) ? objectOr(p.configuration) : CANCEL.has(method) ? p : undefined;
  if (!holder) return { ask: undefined };
  const field = SEND.has(method) ? 'configuration.ifGenerationMatch' : 'ifGenerationMatch';
  const match = generationOf(holder.ifGenerationMatch ?? holder.if_generation_match, field);
  if (typeof match === 'object') return match;
  return { ask: match === undefined ? undefined : { ifGenerationMatch: match } };
}

const GET = new Set(['GetTask', 'tasks/get']);
const SEND = new Set(['SendMessage', 'SendStreamingMessage', 'message/send', 'message/stream']);
const CANCEL = new Set(['CancelTask', 'tasks/cancel']);

const objectOr = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
