import { pageShell } from '../browser/shell.js';

/** The console page: the kit's shell, with the console's styles, uPlot, and its views. */
export const CONSOLE_PAGE = pageShell({
  name: 'console',
  title: 'Operator console',
  heading: '<a href="#" id="home">Operator console</a>',
  signInNote:
    "Use the credentials you call the agent's API with; an operator's (OPERATORS). They are kept in this tab only.",
  styles: ['uplot.css', 'console.css'],
  scripts: ['uplot.js'],
  module: 'console.js',
  views: `  <section id="overview" aria-labelledby="tasks-title" hidden>
    <h2 id="charts-title">The last hour</h2>
    <div id="charts" class="charts" aria-describedby="charts-note"></div>
    <p id="charts-note" class="meta"></p>
    <h2 id="tasks-title">Tasks</h2>
    <ul id="counts" class="counts" aria-label="Tasks by state"></ul>
    <form id="filters" class="filters" aria-label="Filter the tasks">
      <label>State <select name="state" id="f-state"><option value="">any</option></select></label>
      <label>Skill <input name="skill" id="f-skill" spellcheck="false"></label>
      <label>Owner <input name="owner" id="f-owner" placeholder="tenant/principal" spellcheck="false"></label>
      <label>Id contains <input name="id" id="f-id" spellcheck="false"></label>
      <label>Created after <input type="datetime-local" name="createdAfter" step="1"></label>
      <label>Created before <input type="datetime-local" name="createdBefore" step="1"></label>
      <label>Updated after <input type="datetime-local" name="updatedAfter" step="1"></label>
      <label>Updated before <input type="datetime-local" name="updatedBefore" step="1"></label>
      <button type="submit" id="apply">Filter</button>
      <button type="reset" id="clear">Clear</button>
    </form>
    <table id="list">
      <caption id="list-summary"></caption>
      <thead><tr><th scope="col">Task</th><th scope="col">State</th><th scope="col">Skill</th><th scope="col">Owner</th><th scope="col">Created</th><th scope="col">Updated</th><th scope="col">Progress</th></tr></thead>
      <tbody id="rows"></tbody>
    </table>
    <nav class="pager" aria-label="Pages">
      <button type="button" id="first" disabled>First page</button>
      <button type="button" id="next" disabled>Next page</button>
    </nav>
  </section>
  <section id="task" aria-labelledby="task-title" hidden>
    <p><a href="#" id="back">← All tasks</a></p>
    <h2 id="task-title"></h2>
    <dl id="task-fields" class="fields"></dl>
    <p class="actions"><button type="button" id="cancel">Cancel this task</button></p>
    <h3>Timeline</h3>
    <p id="timeline-note" class="meta"></p>
    <ol id="timeline" class="timeline"></ol>
    <h3>Webhook deliveries</h3>
    <ul id="webhooks"></ul>
    <h4>Waiting and dead letters</h4>
    <table id="outbox-table"><thead><tr><th scope="col">Webhook</th><th scope="col">Event</th><th scope="col">Attempts</th><th scope="col">Next attempt / dead since</th><th scope="col">Last error</th><th scope="col">Action</th></tr></thead><tbody id="outbox"></tbody></table>
    <h4>Attempts (newest first)</h4>
    <table id="attempts-table"><thead><tr><th scope="col">Time</th><th scope="col">Webhook</th><th scope="col">Event</th><th scope="col">Attempt</th><th scope="col">Status</th><th scope="col">Outcome</th><th scope="col">Took</th><th scope="col">Error</th></tr></thead><tbody id="attempts"></tbody></table>
  </section>`,
});
