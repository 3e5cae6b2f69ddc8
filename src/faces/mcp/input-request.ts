import { z } from 'zod';
import type { Part, TaskRecord } from '../../engine/task.js';
import { messageText } from '../handle.js';

/**
 * A task's pending input request as MCP shows it: an `elicitation/create` form with one text field.
 * Its key (`ask-<seq>`, the log position where the wait began) is unique over the task's life, as
 * SEP-2663 asks: a later question of the same task has another. The skill's own answer schema is
 * not shown (the engine keeps only the prompt): the answer is checked by the skill when it runs.
 */
export interface PendingInput {
  key: string;
  request: {
    method: 'elicitation/create';
    params: {
      mode: 'form';
      message: string;
      requestedSchema: {
        type: 'object';
        properties: { answer: { type: 'string'; title: string; description: string } };
        required: ['answer'];
      };
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
        requestedSchema: {
          type: 'object',
          properties: { answer: { type: 'string', title: 'Answer', description: prompt } },
          required: ['answer'],
        },
      },
    },
  };
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
