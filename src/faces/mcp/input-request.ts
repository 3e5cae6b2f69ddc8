import { z } from 'zod';
import { ANSWER_SCHEMA, type Part, type TaskRecord } from '../../engine/task.js';
import { messageText } from '../handle.js';

/**
 * A task's pending input request as MCP shows it: an `elicitation/create` form, with the fields of
 * the answer schema the skill declared (`ctx.ask({schema})`, kept on the asking message) when MCP's
 * flat form can hold it, else one text field. Its key (`ask-<seq>`, the log position where the wait
 * began) is unique over the task's life, as SEP-2663 asks: a later question of the same task has
 * another. The skill checks the answer when it runs again, whatever the form. Sent as a request
 * only to clients that declared form-mode elicitation (see session.ts); every client reads the key
 * and the schema in the task's `_meta["taskhandle/input"]`.
 */
export interface PendingInput {
  key: string;
  request: {
    method: 'elicitation/create';
    params: {
      mode: 'form';
      message: string;
      requestedSchema: FormSchema;
    };
  };
}

export function pendingInput(r: TaskRecord): PendingInput | undefined {
  if (r.state !== 'input-required') return undefined;
  const prompt = messageText(r.statusMessage) || 'The task needs your answer';
  return {
    key: `ask-${r.lastSeq}`,
    request: {
      method: 'elicitation/create',
      params: {
        mode: 'form',
        message: prompt,
        requestedSchema: formOf(r.statusMessage?.metadata?.[ANSWER_SCHEMA]) ?? {
          type: 'object',
          properties: { answer: { type: 'string', title: 'Answer', description: prompt } },
          required: ['answer'],
        },
      },
    },
  };
}

/** An elicitation form's schema: a flat object of primitive fields (MCP's restricted JSON Schema). */
export interface FormSchema {
  type: 'object';
  properties: Record<string, Record<string, unknown>>;
  required?: string[];
}

const PRIMITIVE = new Set(['string', 'number', 'integer', 'boolean']);

/** The skill's answer schema as a form, if it is an object of primitive fields only. */
function formOf(schema: unknown): FormSchema | undefined {
  const s = schema as { type?: unknown; properties?: unknown; required?: unknown } | undefined;
  if (s?.type !== 'object' || typeof s.properties !== 'object' || s.properties === null) return undefined;
  const properties = s.properties as Record<string, Record<string, unknown>>;
  const fields = Object.values(properties);
  if (fields.length === 0 || !fields.every((f) => PRIMITIVE.has(f?.type as string))) return undefined;
  const required = Array.isArray(s.required) ? (s.required as string[]) : undefined;
  return { type: 'object', properties, ...(required ? { required } : {}) };
}

/** An elicitation result (MCP `ElicitResult`): the client's answer, or that the person declined. */
export const ElicitResult = z.object({
  action: z.enum(['accept', 'decline', 'cancel']),
  content: z.record(z.string(), z.unknown()).optional(),
});
export type ElicitResult = z.infer<typeof ElicitResult>;

/**
 * The message parts of an accepted answer: `{answer: "approve"}` (our form's field, or any one text
 * field) is the text; any other content is a data part (a skill's schema reads the first data part).
 */
export function answerParts(content: Record<string, unknown> | undefined): Part[] {
  const values = Object.values(content ?? {});
  const [only] = values;
  if (values.length === 1 && typeof only === 'string' && only.length > 0) return [{ text: only }];
  return [{ data: content ?? {} }];
}
