// The approvals inbox page. Plain ES module: no framework, no build step. Everything it renders
// from the server goes through textContent, never innerHTML.
import { createParser } from './eventsource-parser.js';

const STORAGE_KEY = 'taskhandle.inbox.credential';
const $ = (id) => document.getElementById(id);
const ui = {
  status: $('status'),
  retry: $('retry'),
  who: $('who'),
  signOut: $('sign-out'),
  signIn: $('sign-in'),
  form: $('sign-in-form'),
  inbox: $('inbox'),
  summary: $('summary'),
  tasks: $('tasks'),
};

/** The credential of this tab: { kind: 'api-key' | 'bearer', value }, or null (anonymous). */
let credential = readCredential();
/** Aborts the change stream of the current sign-in. */
let session;

function readCredential() {
  try {
    const saved = JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? 'null');
    return saved && typeof saved.value === 'string' ? saved : null;
  } catch {
    return null;
  }
}

function authHeaders() {
  if (!credential) return {};
  return credential.kind === 'bearer'
    ? { Authorization: `Bearer ${credential.value}` }
    : { 'X-API-Key': credential.value };
}

function say(text, error = false) {
  ui.status.textContent = text;
  ui.status.classList.toggle('error', error);
}

class Unauthorized extends Error {}

/** Why the agent turned this tab's credential away (the server's reason, if it gave one), and what to do. */
function refusal(detail) {
  const why = detail ? ` (${detail.replace(/^Unauthenticated:\s*/, '')})` : '';
  return credential?.kind === 'bearer'
    ? `This token was not accepted${why}. Get a new one (tokens expire) and sign in again.`
    : `This API key was not accepted${why}. Check it, or ask whoever runs the agent for one, and sign in again.`;
}

/** Calls the inbox API; an error's message says what went wrong as a clause ("could not ...: <it>."). */
async function api(path, init = {}) {
  let res;
  try {
    res = await fetch(new URL(`api${path}`, import.meta.url), {
      ...init,
      headers: { ...authHeaders(), ...init.headers },
    });
  } catch {
    throw new Error(
      `the agent at ${location.origin} did not answer (check that it runs and that this device can reach it)`,
    );
  }
  if (!res.ok) {
    const problem = await res.json().catch(() => ({}));
    if (res.status === 401) throw new Unauthorized(refusal(problem.detail));
    const detail = String(problem.detail ?? res.statusText).replace(/\.$/, '');
    throw new Error(`the agent answered ${res.status}${detail ? ` (${detail})` : ''}`);
  }
  return res.json();
}

function showSignIn(message) {
  session?.abort();
  session = undefined;
  ui.inbox.hidden = true;
  ui.who.hidden = true;
  ui.signOut.hidden = true;
  ui.signIn.hidden = false;
  say(message ?? '', message !== undefined);
  $('credential').focus();
}

/** A list that could not be loaded: why, and a button to try again (focused, so Enter retries). */
function failed(message) {
  say(message, true);
  ui.retry.hidden = false;
  ui.retry.focus();
}

/**
 * Loads the list and follows it. Says "loading" until the first answer; `focus` moves to the summary
 * afterwards (after a sign-in or a retry, whose control is gone by then).
 */
async function start({ focus = false } = {}) {
  ui.retry.hidden = true;
  say('Loading the inbox…');
  try {
    const list = await api('/waiting');
    say('');
    ui.signIn.hidden = true;
    ui.inbox.hidden = false;
    ui.who.hidden = false;
    ui.who.textContent = `Signed in as ${list.caller}`;
    ui.signOut.hidden = credential === null;
    render(list);
    if (focus) ui.summary.focus();
    session?.abort();
    session = new AbortController();
    follow(session.signal);
    // The ages shown grow even when nothing changes.
    const ages = setInterval(refresh, 60_000);
    session.signal.addEventListener('abort', () => clearInterval(ages));
  } catch (err) {
    if (err instanceof Unauthorized) {
      // Anonymous access refused: this agent wants credentials (or the saved ones expired).
      const had = credential !== null;
      forget();
      showSignIn(had ? err.message : undefined);
    } else {
      failed(`Could not load the inbox: ${err.message}.`);
    }
  }
}

function forget() {
  credential = null;
  sessionStorage.removeItem(STORAGE_KEY);
}

async function refresh() {
  try {
    render(await api('/waiting'));
  } catch (err) {
    if (err instanceof Unauthorized) showSignIn(err.message);
    else say(`Could not refresh the list: ${err.message}.`, true);
  }
}

const minutes = (ms) => {
  const m = Math.floor(ms / 60_000);
  if (m < 1) return 'less than a minute';
  if (m < 120) return `${m} min`;
  const h = Math.floor(m / 60);
  return h < 48 ? `${h} h` : `${Math.floor(h / 24)} days`;
};

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === 'text') node.textContent = value;
    else if (key === 'class') node.className = value;
    else node.setAttribute(key, value);
  }
  node.append(...children);
  return node;
}

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
    await api(`/tasks/${encodeURIComponent(task.id)}/answer`, {
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
    if (err instanceof Unauthorized) return showSignIn(err.message);
    say(`Could not answer ${task.id}: ${err.message}.`, true);
    for (const b of form.querySelectorAll('button')) b.disabled = false;
  }
}

/** Follows the change stream (fetch, since EventSource sends no headers); reconnects with backoff. */
async function follow(signal) {
  let delay = 500;
  let reconnecting = false;
  while (!signal.aborted) {
    try {
      const res = await fetch(new URL('api/events', import.meta.url), { headers: authHeaders(), signal });
      if (res.status === 401) return showSignIn(refusal());
      if (!res.ok || !res.body) throw new Error(`status ${res.status}`);
      if (reconnecting) say('Reconnected.');
      delay = 500;
      const parser = createParser({
        onEvent: (event) => {
          if (event.event === 'changed') refresh();
        },
        // Sent once the server watches our list: anything that changed before (or while we were
        // away) is fetched now, so nothing falls between the first fetch and the stream.
        onComment: (comment) => {
          if (comment.trim() === 'connected') refresh();
        },
      });
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        parser.feed(value);
      }
    } catch {
      if (signal.aborted) return;
    }
    reconnecting = true;
    say('Connection lost; reconnecting…');
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 15_000);
  }
}

ui.form.addEventListener('submit', (e) => {
  e.preventDefault();
  const data = new FormData(ui.form);
  const value = String(data.get('credential') ?? '').trim();
  if (!value) return;
  credential = { kind: String(data.get('kind')), value };
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify(credential));
  ui.form.reset();
  start({ focus: true });
});

ui.retry.addEventListener('click', () => start({ focus: true }));

ui.signOut.addEventListener('click', () => {
  forget();
  ui.tasks.replaceChildren();
  showSignIn();
  say('Signed out.');
});

ui.summary.tabIndex = -1;
start();
