import { coresTable } from './report.js';
import { type LoadSummary, type Results, runOf, summarise } from './results.js';

/**
 * The paragraph under the create and poll table that says what the PostgreSQL rows mean, with the
 * numbers of the run that measured them; nothing when no PostgreSQL kind was measured.
 */
export function postgresNotes(r: Results): string {
  const at = (s: 'create' | 'poll') => ({
    sqlite: summarise(r[s].taskhandle),
    one: summarise(r[s]['taskhandle-pg']),
    two: summarise(r[s]['taskhandle-pg-2']),
  });
  const create = at('create');
  const poll = at('poll');
  if (!create.one && !create.two && !poll.one && !poll.two) return notMeasured(r);
  const info = runOf(r, 'create') ?? runOf(r, 'poll');
  const pg = info?.machine.postgres;
  const setting = (name: string) => pg?.settings[name] ?? '?';
  const cores = info?.machine.cores ?? r.machine.cores;
  const used = (m: LoadSummary | undefined) =>
    m ? (m.serverCpu + (Number.isFinite(m.databaseCpu) ? m.databaseCpu : 0) + m.clientCpu).toFixed(2) : '?';
  const times = (a: LoadSummary | undefined, b: LoadSummary | undefined) =>
    a && b && b.rps > 0 ? `${(a.rps / b.rps).toFixed(2)}×` : '?';
  return `
### What the PostgreSQL rows mean

(c) on PostgreSQL is the same server with \`DATABASE_URL=postgres://…\` and \`DATABASE_SCHEMA\` set to a
fresh schema per measurement (the server creates it at start; the bench drops it after), its pool at the
default \`DATABASE_POOL_MAX=10\` connections per instance, every other setting as for (c) on SQLite. The
database is ${pg?.description ?? 'PostgreSQL (not recorded)'}, on this machine.

- **create**: the creates that arrive in one event-loop turn go as one INSERT statement (a data-modifying
  CTE over arrays: message ids, task rows, their events and webhooks, src/store/postgres/create-batch.ts),
  committed on its own; a turn of one create is one statement of its own, as before. The server does not set \`synchronous_commit\`; the database has it
  \`${setting('synchronous_commit')}\` (with \`fsync=${setting('fsync')}\`), so a create is answered only after its commit record is on
  disk: the promise SQLite's fsynced WAL keeps for (c) on SQLite. Commits in flight together share one
  flush (PostgreSQL's group commit).
- **poll**: per GetTask, a read of the task's version (with a queued task's counts), then the cached
  answer; the same work as on SQLite, but over a round trip to another process: the reads of the polls
  that arrive in one event-loop turn go as one statement (src/store/postgres/turn-batch.ts).
- **2 instances**: two processes on one schema; autocannon's ${info?.options.connections ?? r.options.connections} connections alternate between them (half to
  each), in one measurement: requests are summed and the percentiles are over all of them. The poll tasks
  are created through the first instance and polled through both: half of the answers come from an
  instance that never saw the task created. taskhandle CPU and RSS are summed over both.
- **What a second instance on this machine shows.** Both instances, PostgreSQL and the load generator share
  the same ${cores} cores: in create they used ${used(create.one)} of them with one instance and ${used(create.two)} with
  two; in poll ${used(poll.one)} and ${used(poll.two)} (table below). A second instance cannot add cores the machine does not
  have, so this is no measure of horizontal scaling; two instances run at ${times(create.two, create.one)} the create rate of one
  and ${times(poll.two, poll.one)} its poll rate. What the rows do show is that the cluster works under full load (any
  instance answers for any task; failed requests are counted in the table above) and what a second process
  costs when it has to share the cores (a second event loop, pool and LISTEN connection). Scaling out needs
  instances on machines of their own, and PostgreSQL on another.
- Against (c) on SQLite: one instance on PostgreSQL runs at ${times(create.one, create.sqlite)} its create rate and
  ${times(poll.one, poll.sqlite)} its poll rate. "PostgreSQL CPU" counts the backends serving the instances (found by
  their application_name) and the database's background processes (WAL writer, checkpointer, autovacuum).

Where the cores went (medians; "others" is every other process on the machine, the worst round):

${coresTable(r)}
`;
}

function notMeasured(r: Results): string {
  const why = (runOf(r, 'create') ?? runOf(r, 'poll') ?? r)?.machine.postgres?.description;
  return why ? `\nPostgreSQL: ${why}.\n` : '';
}
