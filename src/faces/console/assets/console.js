// The operator console page. Plain ES module: no framework, no build step. Everything it renders
// from the server goes through textContent, never innerHTML.
import { drawCharts } from './charts.js';
import { createParser } from './eventsource-parser.js';

const STORAGE_KEY = 'taskhandle.console.credential';
const STATES = [
  'submitted',
  'working',
  'input-required',
  'auth-required',
  'completed',
  'failed',
  'canceled',
  'rejected',
];
const TERMINAL = new Set(['completed', 'failed', 'canceled', 'rejected']);
const $ = (id) => document.getElementById(id);
const ui = {
  status: $('status'),
  retry: $('retry'),
  who: $('who'),
  signOut: $('sign-out'),
  signIn: $('sign-in'),
  form: $('sign-in-form'),
  overview: $('overview'),
  counts: $('counts'),
  filters: $('filters'),
  rows: $('rows'),
  listSummary: $('list-summary'),
  first: $('first'),
  next: $('next'),
  charts: $('charts'),
  chartsNote: $('charts-note'),
  task: $('task'),
  taskTitle: $('task-title'),
  taskFields: $('task-fields'),
  cancel: $('cancel'),
  timeline: $('timeline'),
  timelineNote: $('timeline-note'),
  webhooks: $('webhooks'),
  outbox: $('outbox'),
  attempts: $('attempts'),
};

let credential = readCredential();
/** Aborts the change stream of what is shown now. */
let session;
/** The list's filter (query parameters) and the page tokens that led to the page shown. */
let filter = {};
let pageToken = '';
let nextToken = '';
/** The task shown, on its page. */
let shownTask;

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
class NotOperator extends Error {}

/** Calls the console API; an error's message says what went wrong as a clause. */
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
    const detail = String(problem.detail ?? res.statusText).replace(/\.$/, '');
    if (res.status === 401)
      throw new Unauthorized(`${detail.replace(/^Unauthenticated:\s*/, 'Not accepted: ')}. Sign in again.`);
    if (res.status === 403) throw new NotOperator(`${detail}.`);
    throw new Error(`the agent answered ${res.status}${detail ? ` (${detail})` : ''}`);
  }
  return res;
}

const json = async (path, init) => (await api(path, init)).json();

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

const when = (iso) => (iso ? new Date(iso).toLocaleString() : '');

function showSignIn(message) {
  session?.abort();
  session = undefined;
  ui.overview.hidden = true;
  ui.task.hidden = true;
  ui.who.hidden = true;
  ui.signOut.hidden = true;
  ui.signIn.hidden = false;
  say(message ?? '', message !== undefined);
  $('credential').focus();
}

function refused(err) {
  if (err instanceof Unauthorized) {
    const had = credential !== null;
    forget();
    showSignIn(had ? err.message : undefined);
    return true;
  }
  if (err instanceof NotOperator) {
    showSignIn(err.message);
    return true;
  }
  return false;
}

function forget() {
  credential = null;
  sessionStorage.removeItem(STORAGE_KEY);
}

/** Shows what the address says: the list (#) or a task (#task/<id>), and follows its changes. */
async function show() {
  ui.retry.hidden = true;
  const match = /^#task\/(.+)$/.exec(location.hash);
  session?.abort();
  session = new AbortController();
  try {
    if (match) await openTask(decodeURIComponent(match[1]), session.signal);
    else await openList(session.signal);
    ui.signIn.hidden = true;
    ui.signOut.hidden = credential === null;
    ui.who.hidden = false;
    ui.who.textContent = credential === null ? 'Signed in as the local user' : 'Signed in';
  } catch (err) {
    if (refused(err)) return;
    say(`Could not load the console: ${err.message}.`, true);
    ui.retry.hidden = false;
    ui.retry.focus();
  }
}

// The list

async function openList(signal) {
  ui.task.hidden = true;
  shownTask = undefined;
  say('Loading the tasks…');
  await Promise.all([loadList(), loadCounts(), loadCharts()]);
  say('');
  ui.overview.hidden = false;
  follow(signal, undefined);
  // The charts move with the clock too.
  const timer = setInterval(() => loadCharts().catch(() => {}), 60_000);
  signal.addEventListener('abort', () => clearInterval(timer));
}

async function loadList() {
  const params = new URLSearchParams({ ...filter, pageSize: '50', ...(pageToken ? { pageToken } : {}) });
  const page = await json(`/tasks?${params}`);
  nextToken = page.nextPageToken;
  ui.rows.replaceChildren(...page.tasks.map(row));
  const filtered = Object.keys(filter).length > 0;
  ui.listSummary.textContent =
    page.tasks.length === 0
      ? filtered
        ? 'No task matches these filters.'
        : 'No tasks yet.'
      : `${page.tasks.length} task${page.tasks.length === 1 ? '' : 's'}${pageToken ? ' (a later page)' : ''}, most recently ${page.orderedBy === 'createdAt' ? 'created' : 'updated'} first${filtered ? ', filtered' : ''}.`;
  ui.next.disabled = nextToken === '';
  ui.first.disabled = pageToken === '';
}

function row(t) {
  const link = el('a', { href: `#task/${encodeURIComponent(t.id)}` }, el('code', { text: t.id }));
  return el(
    'tr',
    { 'data-id': t.id },
    el('td', {}, link),
    el('td', { class: `state ${t.state}`, text: t.state }),
    el('td', { text: t.skill }),
    el('td', { text: t.owner }),
    el('td', { text: when(t.createdAt) }),
    el('td', { text: when(t.updatedAt) }),
    el('td', { text: t.percent === undefined ? '' : `${t.percent}%` }),
  );
}

async function loadCounts() {
  const { counts } = await json('/counts');
  ui.counts.replaceChildren(
    ...STATES.filter((s) => counts[s]).map((s) =>
      el(
        'li',
        { class: `state ${s}` },
        el('span', { text: s }),
        ' ',
        el('strong', { text: String(counts[s]) }),
      ),
    ),
  );
  if (!ui.counts.children.length) ui.counts.append(el('li', { text: 'No tasks stored.' }));
}

async function loadCharts() {
  const series = await json('/activity');
  ui.chartsNote.textContent = series.partial
    ? 'Busy hour: the charts were drawn from the most recent tasks only.'
    : 'Per minute, from the tasks and delivery attempts the store keeps.';
  drawCharts(ui.charts, series);
}

function readFilters() {
  const data = new FormData(ui.filters);
  const next = {};
  for (const [key, raw] of data) {
    const value = String(raw).trim();
    if (!value) continue;
    // datetime-local is the browser's local time: sent as an instant, with its offset.
    next[key] = /After$|Before$/.test(key) ? new Date(value).toISOString() : value;
  }
  return next;
}

let refreshing;
/** Fetches the list, counts (and, on a task page, the task) again: at most one at a time, then once more. */
function refreshSoon() {
  if (refreshing) {
    refreshing.again = true;
    return;
  }
  refreshing = { again: false };
  setTimeout(async () => {
    try {
      if (shownTask) await loadTask(shownTask);
      else await Promise.all([loadList(), loadCounts()]);
    } catch (err) {
      if (!refused(err)) say(`Could not refresh: ${err.message}.`, true);
    }
    const again = refreshing.again;
    refreshing = undefined;
    if (again) refreshSoon();
  }, 200);
}

// One task

async function openTask(id, signal) {
  ui.overview.hidden = true;
  say('Loading the task…');
  shownTask = id;
  await loadTask(id);
  say('');
  ui.task.hidden = false;
  ui.taskTitle.focus();
  follow(signal, id);
  // Deliveries still to make change without a state change: looked at again while any wait.
  const timer = setInterval(() => {
    if (ui.outbox.querySelector('tr.pending')) refreshSoon();
  }, 2000);
  signal.addEventListener('abort', () => clearInterval(timer));
}

async function loadTask(id) {
  const t = await json(`/tasks/${encodeURIComponent(id)}`);
  if (shownTask !== id) return;
  ui.taskTitle.replaceChildren(`${t.skill} · `, el('code', { text: t.id }));
  const fields = [
    ['State', t.state],
    ['Status', t.status],
    ['Owner', t.owner],
    ['Skill', t.skill],
    [
      'Progress',
      t.progress
        ? `${t.progress.percent ?? '?'}%${t.progress.message ? ` · ${t.progress.message}` : ''}`
        : '',
    ],
    ['Created', when(t.createdAt)],
    ['Updated', when(t.updatedAt)],
    ['Expires', when(t.expiresAt)],
    ['Context', t.contextId],
    ['Poll interval', `${t.pollIntervalMs} ms`],
    ['Runs', `${t.runs}${t.interruptions ? ` (${t.interruptions} interrupted)` : ''}`],
    ['Held by', t.heldBy ?? ''],
    ['Lease until', when(t.leaseUntil)],
    ['Approvers', t.approvers.join(', ')],
    ['Answer deadline', when(t.inputDeadline)],
    ['Input', t.input],
  ];
  ui.taskFields.replaceChildren(
    ...fields.filter(([, v]) => v).flatMap(([k, v]) => [el('dt', { text: k }), el('dd', { text: v })]),
  );
  ui.cancel.hidden = TERMINAL.has(t.state);
  ui.cancel.disabled = false;
  ui.timelineNote.textContent = t.eventsOmitted ? `${t.eventsOmitted} older events are not shown.` : '';
  ui.timeline.replaceChildren(...t.events.map((e) => entry(t.id, e)));
  ui.webhooks.replaceChildren(
    ...(t.webhooks.length
      ? t.webhooks.map((w) =>
          el('li', { text: `${w.id} → ${w.destination}${w.allEvents ? ' (every event)' : ''}` }),
        )
      : [el('li', { text: 'No webhooks.' })]),
  );
  ui.outbox.replaceChildren(...t.outbox.map((o) => outboxRow(t.id, o)));
  if (!t.outbox.length)
    ui.outbox.append(el('tr', {}, el('td', { colspan: '6', text: 'Nothing waits to be delivered.' })));
  ui.attempts.replaceChildren(...t.attempts.map(attemptRow));
  if (!t.attempts.length)
    ui.attempts.append(el('tr', {}, el('td', { colspan: '8', text: 'No attempts yet.' })));
}

function entry(taskId, e) {
  const head = el('span', { class: 'meta', text: `#${e.seq} · ${when(e.at)} · ${e.kind}` });
  const item = el('li', { class: `event ${e.kind}` }, head);
  if (e.kind === 'status') item.append(' ', el('strong', { class: `state ${e.state}`, text: e.state }));
  if (e.kind === 'progress' && e.percent !== undefined)
    item.append(' ', el('strong', { text: `${e.percent}%` }));
  if (e.kind === 'message') item.append(' ', el('em', { text: e.role }));
  if (e.text) item.append(el('p', { class: 'text', text: e.text }));
  if (e.kind === 'artifact') {
    const what = `${e.name || e.artifactId}${e.append ? ' (appended chunk)' : ''}${e.lastChunk ? '' : ' (more to come)'}`;
    item.append(' ', el('strong', { text: what }), ' ', download(taskId, e));
    for (const p of e.parts) {
      const text =
        p.kind === 'text' || p.kind === 'data'
          ? p.text
          : p.kind === 'url'
            ? p.url
            : `${p.filename || 'file'} · ${p.bytes} bytes${p.mediaType ? ` · ${p.mediaType}` : ''}`;
      item.append(el('p', { class: 'text', text }));
    }
  }
  return item;
}

/** A download link: fetched with this tab's credentials (a plain link would send none). */
function download(taskId, e) {
  const link = el('a', { href: '#', class: 'download', text: 'Download' });
  link.addEventListener('click', async (ev) => {
    ev.preventDefault();
    try {
      const res = await api(e.download.replace(/^\/console\/api/, ''));
      const blob = await res.blob();
      const name = /filename\*=UTF-8''([^;]+)/.exec(res.headers.get('content-disposition') ?? '')?.[1];
      const url = URL.createObjectURL(blob);
      const a = el('a', { href: url, download: name ? decodeURIComponent(name) : `${e.artifactId}` });
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (err) {
      if (!refused(err))
        say(`Could not download artifact ${e.artifactId} of ${taskId}: ${err.message}.`, true);
    }
  });
  return link;
}

function outboxRow(taskId, o) {
  const action = el('td');
  if (o.dead) {
    const b = el('button', { type: 'button', class: 'redeliver', text: 'Deliver again' });
    b.addEventListener('click', () => redeliver(taskId, o, b));
    action.append(b);
  }
  return el(
    'tr',
    { class: o.dead ? 'dead' : 'pending' },
    el('td', { text: o.webhook }),
    el('td', { text: `#${o.seq}` }),
    el('td', { text: String(o.attempts) }),
    el('td', { text: o.dead ? `dead since ${when(o.deadAt)}` : when(o.nextAttemptAt) }),
    el('td', { text: o.lastError }),
    action,
  );
}

const attemptRow = (a) =>
  el(
    'tr',
    { class: a.outcome },
    el('td', { text: when(a.at) }),
    el('td', { text: a.webhook }),
    el('td', { text: `#${a.seq}` }),
    el('td', { text: String(a.attempt) }),
    el('td', { text: a.status === null ? '—' : String(a.status) }),
    el('td', { text: a.outcome }),
    el('td', { text: `${a.durationMs} ms` }),
    el('td', { text: a.error }),
  );

const action = (path) =>
  json(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });

async function redeliver(taskId, o, button) {
  button.disabled = true;
  try {
    await action(
      `/tasks/${encodeURIComponent(taskId)}/deliveries/${encodeURIComponent(o.webhook)}/${o.seq}/redeliver`,
    );
    say(`Queued again: event #${o.seq} for webhook ${o.webhook}.`);
    refreshSoon();
  } catch (err) {
    if (!refused(err)) say(`Could not deliver again: ${err.message}.`, true);
    button.disabled = false;
  }
}

ui.cancel.addEventListener('click', async () => {
  const id = shownTask;
  if (!id) return;
  ui.cancel.disabled = true;
  say(`Canceling ${id}…`);
  try {
    const done = await action(`/tasks/${encodeURIComponent(id)}/cancel`);
    say(`Task ${id} is ${done.state}.`);
    refreshSoon();
  } catch (err) {
    if (!refused(err)) say(`Could not cancel ${id}: ${err.message}.`, true);
    ui.cancel.disabled = false;
  }
});

// Live

/** Follows the change stream (fetch, since EventSource sends no headers); reconnects with backoff. */
async function follow(signal, taskId) {
  let delay = 500;
  let reconnecting = false;
  const path = taskId ? `api/events?task=${encodeURIComponent(taskId)}` : 'api/events';
  while (!signal.aborted) {
    try {
      const res = await fetch(new URL(path, import.meta.url), { headers: authHeaders(), signal });
      if (res.status === 401 || res.status === 403) return show();
      if (!res.ok || !res.body) throw new Error(`status ${res.status}`);
      if (reconnecting) say('Reconnected.');
      delay = 500;
      const parser = createParser({
        onEvent: (event) => {
          if (event.event === 'task') refreshSoon();
          if (event.event !== 'changed') return;
          const data = JSON.parse(event.data);
          if (!taskId || data.more || data.tasks.some((t) => t.id === taskId)) refreshSoon();
        },
        onComment: (comment) => {
          if (comment.trim() === 'connected') refreshSoon();
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

// Controls

for (const s of STATES) $('f-state').append(el('option', { value: s, text: s }));

ui.filters.addEventListener('submit', (e) => {
  e.preventDefault();
  filter = readFilters();
  pageToken = '';
  loadList().catch((err) => refused(err) || say(`Could not filter: ${err.message}.`, true));
});
ui.filters.addEventListener('reset', () => {
  filter = {};
  pageToken = '';
  setTimeout(() => loadList().catch((err) => refused(err) || say(`Could not load: ${err.message}.`, true)));
});
ui.next.addEventListener('click', () => {
  pageToken = nextToken;
  loadList().catch((err) => refused(err) || say(`Could not page: ${err.message}.`, true));
});
ui.first.addEventListener('click', () => {
  pageToken = '';
  loadList().catch((err) => refused(err) || say(`Could not page: ${err.message}.`, true));
});

ui.form.addEventListener('submit', (e) => {
  e.preventDefault();
  const data = new FormData(ui.form);
  const value = String(data.get('credential') ?? '').trim();
  if (!value) return;
  credential = { kind: String(data.get('kind')), value };
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify(credential));
  ui.form.reset();
  show();
});

ui.retry.addEventListener('click', () => show());
ui.signOut.addEventListener('click', () => {
  forget();
  showSignIn();
  say('Signed out.');
});
window.addEventListener('hashchange', () => show());
ui.taskTitle.tabIndex = -1;
show();
