import { pageShell } from '../browser/shell.js';

/** The inbox page: the kit's shell, with the inbox's styles and its one view. */
export const INBOX_PAGE = pageShell({
  name: 'inbox',
  title: 'Approvals inbox',
  signInNote: "Use the credentials you call the agent's API with. They are kept in this tab only.",
  styles: ['inbox.css'],
  module: 'inbox.js',
  views: `  <section id="inbox" aria-labelledby="inbox-title" hidden>
    <h2 id="inbox-title">Waiting for you</h2>
    <p id="summary"></p>
    <ul id="tasks"></ul>
  </section>`,
});
