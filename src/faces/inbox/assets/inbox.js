// The approvals inbox page. Plain ES module: no framework, no build step. Everything it renders
// from the server goes through textContent, never innerHTML.
import { $, browserPage, el } from './kit.js';

const ui = {
  summary: $('summary'),
  tasks: $('tasks'),
};

/**
 * Loads the list and follows it. Says "loading" until the first answer; `focus` moves to the summary
 * afterwards (after a sign-in or a retry, whose control is gone by then).
 */
const page = browserPage({
  name: 'inbox',
  what: 'the inbox',
  async open(signal, { focus }) {
    page.say('Loading the inbox…');
    const list = await page.json('/waiting');
    page.say('');
    $('inbox').hidden = false;
    render(list);
    if (focus) ui.summary.focus();
    follow(signal);
    // The ages shown grow even when nothing changes.
    const ages = setInterval(refresh, 60_000);
    signal.addEventListener('abort', () => clearInterval(ages));
    return `Signed in as ${list.caller}`;
  },
  signedOut: () => ui.tasks.replaceChildren(),
});
const { json, say, refused } = page;

async function refresh() {
  try {
    render(await json('/waiting'));
  } catch (err) {
    if (!refused(err)) say(`Could not refresh the list: ${err.message}.`, true);
  }
}

const minutes = (ms) => {
  const m = Math.floor(ms / 60_000);
  if (m < 1) return 'less than a minute';
  if (m < 120) return `${m} min`;
  const h = Math.floor(m / 60);
  return h < 48 ? `${h} h` : `${Math.floor(h / 24)} days`;
};

function render(list) {
  const count = list.tasks.length;
  ui.summary.textContent =
    count === 0 ? 'Nothing waits for you.' : `${count} task${count === 1 ? '' : 's'} waiting.`;
  // Keep what the approver is typing in an answer that is still listed.
  const drafts = new Map();
  for (const area of ui.tasks.querySelectorAll('textarea')) drafts.set(area.id, area.value);
  ui.tasks.replaceChildren(...list.tasks.map((task) => item(task, drafts)));
}

function item(task, drafts) {
  const key = task.id.replace(/[^A-Za-z0-9_-]/g, '_');
  const titleId = `t-${key}`;
  const promptId = `p-${key}`;
  const answerId = `a-${key}`;
  const asked = task.role === 'owner' ? 'you asked' : `asked by ${task.requester}`;
  const since = new Date(task.waitingSince).toLocaleString();
  const meta = [`${asked}`, `waiting ${minutes(task.waitedMs)} (since ${since})`];
  if (task.deadline) meta.push(`deadline ${new Date(task.deadline).toLocaleString()}`);
  const answer = el('textarea', { id: answerId, rows: '2' });
  answer.value = drafts.get(answerId) ?? '';
  const approval = task.answer === 'decision';
  const form = el(
    'form',
    { 'aria-labelledby': titleId },
    el('label', { for: answerId, text: approval ? 'Comment (optional)' : 'Your answer' }),
    answer,
  );
  const button = (text, cls, body) => {
    const b = el('button', { type: 'button', class: cls, 'aria-describedby': promptId, text });
    b.addEventListener('click', () => send(task, body(answer.value.trim()), form));
    return b;
  };
  if (approval) {
    form.append(
      button('Approve', 'approve', (comment) => ({ decision: 'approve', ...(comment ? { comment } : {}) })),
      button('Reject', 'reject', (comment) => ({ decision: 'reject', ...(comment ? { comment } : {}) })),
    );
  } else {
    form.append(button('Send answer', '', (text) => ({ text })));
  }
  form.addEventListener('submit', (e) => e.preventDefault());
  return el(
    'li',
    {},
    el(
      'article',
      { 'aria-labelledby': titleId },
      el('h3', { id: titleId }, `${task.skill} · `, el('code', { class: 'task-id', text: task.id })),
      el('p', { class: 'meta', text: meta.join(' · ') }),
      el('p', { id: promptId, class: 'prompt', text: task.prompt || '(no prompt)' }),
      form,
    ),
  );
}

async function send(task, body, form) {
  if ('text' in body && !body.text) {
    say('Write an answer first.', true);
    return;
  }
  for (const b of form.querySelectorAll('button')) b.disabled = true;
  try {
    await json(`/tasks/${encodeURIComponent(task.id)}/answer`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    const what =
      body.decision === 'approve' ? 'Approved' : body.decision === 'reject' ? 'Rejected' : 'Answered';
    say(`${what}: ${task.skill} ${task.id}.`);
    await refresh();
    ui.summary.focus?.();
  } catch (err) {
    if (refused(err)) return;
    say(`Could not answer ${task.id}: ${err.message}.`, true);
    for (const b of form.querySelectorAll('button')) b.disabled = false;
  }
}

/** Follows the change stream: the list is fetched again on each change, and once the stream watches. */
function follow(signal) {
  page.follow(signal, '/events', {
    onEvent: (event) => {
      if (event.event === 'changed') refresh();
    },
    onConnected: refresh,
  });
}

ui.summary.tabIndex = -1;
page.show();
