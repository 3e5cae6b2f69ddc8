import { describe, expect, it } from 'vitest';
import { forThePage } from '../../../src/faces/inbox/waiting.js';

// The prompts as skills/approval.ts writes them, and as engine/skill-context.ts words a refused answer
// (the browser test sees the real ones of both skills that ask for a decision).
const HINT = 'Answer "approve" or "reject" (a comment may follow).';
const REFUSED = '(Your last answer was not accepted: answer "approve" or "reject" (a comment may follow))';

describe("the inbox's prompt: the page answers a decision with buttons, not in the A2A text protocol", () => {
  it('leaves out the text-protocol hint of a decision, and the refusal of an earlier text answer', () => {
    expect(forThePage(`Approve or reject: Deploy\nfrom main\n${HINT}`)).toEqual({
      prompt: 'Approve or reject: Deploy\nfrom main',
      answer: 'decision',
    });
    expect(forThePage(`Approve or reject: Deploy\n${HINT}\n${REFUSED}`)).toEqual({
      prompt: 'Approve or reject: Deploy',
      answer: 'decision',
    });
    expect(
      forThePage(
        'Approve exporting 5 rows as CSV? (more than 1 need sign-off) Answer "approve" or "reject".',
      ),
    ).toEqual({ prompt: 'Approve exporting 5 rows as CSV? (more than 1 need sign-off)', answer: 'decision' });
  });

  it('shows any other question whole, refusal included: it is answered in text', () => {
    const asked = 'Which region?\n(Your last answer was not accepted: expected one of eu, us)';
    expect(forThePage(asked)).toEqual({ prompt: asked, answer: 'text' });
    // What a requester wrote is never taken for the skill's hint.
    const quoted = `Approve or reject: ${HINT} twice`;
    expect(forThePage(quoted)).toEqual({ prompt: quoted, answer: 'text' });
  });
});
