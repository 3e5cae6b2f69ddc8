// The operator console page. Plain ES module: no framework, no build step. Everything it renders
// from the server goes through textContent, never innerHTML.
import { drawCharts } from './charts.js';
import { $, browserPage, el, when } from './kit.js';
import { TASK_STATES, TERMINAL_STATES } from './states.js';

const TERMINAL = new Set(TERMINAL_STATES);
const ui = {
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

/** Shows what the address says: the list (#) or a task (#task/<id>), and follows its changes. */
const page = browserPage({
  name: 'console',
  what: 'the console',
  async open(signal) {
    const match = /^#task\/(.+)$/.exec(location.hash);
    if (match) await openTask(decodeURIComponent(match[1]), signal);
    else await openList(signal);
    return page.anonymous ? 'Signed in as the local user' : 'Signed in';
  },
  // A principal that is not an operator is told whom to ask (OPERATORS), and may sign in as another.
  refusedToo: (err) => (err.status === 403 ? `${err.detail}.` : undefined),
});
const { json, say, refused } = page;

/** The list's filter (query parameters) and the page tokens that led to the page shown. */
let filter = {};
let pageToken = '';
let nextToken = '';
/** The task shown, on its page. */
let shownTask;

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
  const list = await json(`/tasks?${params}`);
  nextToken = list.nextPageToken;
  ui.rows.replaceChildren(...list.tasks.map(row));
  const filtered = Object.keys(filter).length > 0;
  ui.listSummary.textContent =
    list.tasks.length === 0
      ? filtered
        ? 'No task matches these filters.'
        : 'No tasks yet.'
      : `${list.tasks.length} task${list.tasks.length === 1 ? '' : 's'}${pageToken ? ' (a later page)' : ''}, most recently ${list.orderedBy === 'createdAt' ? 'created' : 'updated'} first${filtered ? ', filtered' : ''}.`;
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
    ...TASK_STATES.filter((s) => counts[s]).map((s) =>
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
      // The server gives the whole path (wherever the console is mounted).
      const res = await page.call(new URL(e.download, location.href));
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

/** Follows the change stream of the list, or of a task's page. */
function follow(signal, taskId) {
  page.follow(signal, taskId ? `/events?task=${encodeURIComponent(taskId)}` : '/events', {
    onEvent: (event) => {
      if (event.event === 'task') refreshSoon();
      if (event.event !== 'changed') return;
      const data = JSON.parse(event.data);
      if (!taskId || data.more || data.tasks.some((t) => t.id === taskId)) refreshSoon();
    },
    onConnected: refreshSoon,
  });
}

// Controls

for (const s of TASK_STATES) $('f-state').append(el('option', { value: s, text: s }));

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

window.addEventListener('hashchange', () => page.show());
ui.taskTitle.tabIndex = -1;
page.show();
