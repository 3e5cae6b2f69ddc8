// What the server's browser pages (the console, the inbox) share: the sign-in and its credential,
// calls to the page's API, the status line, the change stream. Plain ES module, served beside each
// page's own script (which imports it as ./kit.js); everything it renders goes through textContent.
import { createParser } from './eventsource-parser.js';

export const $ = (id) => document.getElementById(id);

export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === 'text') node.textContent = value;
    else if (key === 'class') node.className = value;
    else node.setAttribute(key, value);
  }
  node.append(...children);
  return node;
}

export const when = (iso) => (iso ? new Date(iso).toLocaleString() : '');

/** An answer of the API other than 2xx: `message` says what went wrong as a clause ("could not ...: <it>."). */
export class ApiError extends Error {
  constructor(message, status, detail) {
    super(message);
    this.status = status;
    this.detail = detail;
  }
}

/** The credential was turned away (401): the page asks to sign in again. */
export class Unauthorized extends ApiError {}

/**
 * The page of the shell (browser/shell.ts): its header, status line, retry button and sign-in form.
 * `name` keys the credential kept in this tab; `what` names the page in errors ("the inbox");
 * `open(signal, { focus })` loads what the page shows, follows it until `signal` aborts and returns
 * who is signed in, as the header says it; `refusedToo(err)`, the message with which an error other
 * than a 401 sends the page back to its sign-in (the console's 403), if it does; `signedOut`, what to
 * clear when the user signs out. Returns what the page's own script calls.
 */
export function browserPage({ name, what, open, refusedToo = () => undefined, signedOut = () => {} }) {
  const storageKey = `taskhandle.${name}.credential`;
  const ui = {
    status: $('status'),
    retry: $('retry'),
    who: $('who'),
    signOut: $('sign-out'),
    signIn: $('sign-in'),
    form: $('sign-in-form'),
  };
  /** The credential of this tab: { kind: 'api-key' | 'bearer', value }, or null (anonymous). */
  let credential = readCredential(storageKey);
  /** Aborts what the page shows now and its change stream. */
  let session;

  const authHeaders = () => {
    if (!credential) return {};
    return credential.kind === 'bearer'
      ? { Authorization: `Bearer ${credential.value}` }
      : { 'X-API-Key': credential.value };
  };

  function say(text, error = false) {
    ui.status.textContent = text;
    ui.status.classList.toggle('error', error);
  }

  /** Why the agent turned this tab's credential away (the server's reason, if it gave one), and what to do. */
  function refusal(detail) {
    const why = detail ? ` (${detail.replace(/^Unauthenticated:\s*/, '')})` : '';
    return credential?.kind === 'bearer'
      ? `This token was not accepted${why}. Get a new one (tokens expire) and sign in again.`
      : `This API key was not accepted${why}. Check it, or ask whoever runs the agent for one, and sign in again.`;
  }

  /** Fetches `url` (of this origin) with the tab's credential; throws an ApiError for an answer other than 2xx. */
  async function call(url, init = {}) {
    let res;
    try {
      res = await fetch(url, { ...init, headers: { ...authHeaders(), ...init.headers } });
    } catch {
      throw new Error(
        `the agent at ${location.origin} did not answer (check that it runs and that this device can reach it)`,
      );
    }
    if (!res.ok) {
      const problem = await res.json().catch(() => ({}));
      if (res.status === 401) throw new Unauthorized(refusal(problem.detail), 401, problem.detail);
      const detail = String(problem.detail ?? res.statusText).replace(/\.$/, '');
      throw new ApiError(
        `the agent answered ${res.status}${detail ? ` (${detail})` : ''}`,
        res.status,
        detail,
      );
    }
    return res;
  }

  /** Calls the page's API (`api/<path>` beside this script, wherever the page is mounted). */
  const api = (path, init) => call(new URL(`api${path}`, import.meta.url), init);
  const json = async (path, init) => (await api(path, init)).json();

  function showSignIn(message) {
    session?.abort();
    session = undefined;
    for (const view of document.querySelectorAll('main > section')) view.hidden = view !== ui.signIn;
    ui.who.hidden = true;
    ui.signOut.hidden = true;
    say(message ?? '', message !== undefined);
    $('credential').focus();
  }

  function forget() {
    credential = null;
    sessionStorage.removeItem(storageKey);
  }

  /** Sends the page to its sign-in if `err` says the credential was refused; true when it did. */
  function refused(err) {
    if (err instanceof Unauthorized) {
      // Anonymous access refused: this agent wants credentials (or the saved ones expired).
      const had = credential !== null;
      forget();
      showSignIn(had ? err.message : undefined);
      return true;
    }
    const message = err instanceof ApiError ? refusedToo(err) : undefined;
    if (message === undefined) return false;
    showSignIn(message);
    return true;
  }

  /**
   * Shows the page (again): what it loads, who is signed in. A load that fails says why, with a
   * button to try again (focused, so Enter retries); `focus` asks the page to move the focus to
   * what it shows (after a sign-in or a retry, whose control is gone by then).
   */
  async function show({ focus = false } = {}) {
    ui.retry.hidden = true;
    session?.abort();
    session = new AbortController();
    try {
      const who = await open(session.signal, { focus });
      ui.signIn.hidden = true;
      ui.who.hidden = false;
      ui.who.textContent = who;
      ui.signOut.hidden = credential === null;
    } catch (err) {
      if (refused(err)) return;
      say(`Could not load ${what}: ${err.message}.`, true);
      ui.retry.hidden = false;
      ui.retry.focus();
    }
  }

  /**
   * Follows the change stream at `api/<path>` (with fetch, since EventSource sends no headers) until
   * `signal` aborts, reconnecting with backoff. `onEvent` gets each event; `onConnected` runs once the
   * server watches (anything that changed before, or while the page was away, is fetched then, so
   * nothing falls between the page's first fetch and the stream). A refused stream shows the page
   * again, which asks to sign in if its load is refused too.
   */
  async function follow(signal, path, { onEvent, onConnected }) {
    let delay = 500;
    let reconnecting = false;
    while (!signal.aborted) {
      try {
        const res = await fetch(new URL(`api${path}`, import.meta.url), { headers: authHeaders(), signal });
        if (res.status === 401 || res.status === 403) return show();
        if (!res.ok || !res.body) throw new Error(`status ${res.status}`);
        if (reconnecting) say('Reconnected.');
        delay = 500;
        const parser = createParser({
          onEvent,
          onComment: (comment) => {
            if (comment.trim() === 'connected') onConnected();
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
    sessionStorage.setItem(storageKey, JSON.stringify(credential));
    ui.form.reset();
    show({ focus: true });
  });
  ui.retry.addEventListener('click', () => show({ focus: true }));
  ui.signOut.addEventListener('click', () => {
    forget();
    signedOut();
    showSignIn();
    say('Signed out.');
  });

  return {
    api,
    call,
    json,
    say,
    refused,
    show,
    follow,
    /** True when this tab signed in with no credential (an agent that serves anonymous callers). */
    get anonymous() {
      return credential === null;
    },
  };
}

function readCredential(storageKey) {
  try {
    const saved = JSON.parse(sessionStorage.getItem(storageKey) ?? 'null');
    return saved && typeof saved.value === 'string' ? saved : null;
  } catch {
    return null;
  }
}
