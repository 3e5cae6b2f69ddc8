/** Help text of each client command (`taskhandle <cmd> --help`), and the overview (`taskhandle help`). */

const CONNECTION = `connection:
  --url URL          the agent's JSON-RPC endpoint (env TASKHANDLE_URL; default http://127.0.0.1:41241)
  --token TOKEN      sent as Authorization: Bearer (an API key or a JWT; env TASKHANDLE_TOKEN)`;

const EXITS = `exit codes: 0 ok/completed, 1 task failed/rejected/canceled, 2 usage, 3 not found, 4 auth,
  5 connection, 6 input required, 7 request refused, 8 not finished yet, 9 card not verified,
  130 interrupted (docs/cli.md)`;

export const COMMAND_HELP: Record<string, string> = {
  serve: `usage: taskhandle serve [--skills FILE[,FILE...]] [--conformance]

Runs the agent in the foreground until SIGTERM or Ctrl-C. Every setting comes from the environment
(PORT, DATABASE_URL, API_KEYS_FILE...; docs/settings.md lists them).
  --skills FILES     serve the skills these ES modules export (instead of SKILLS; docs/skills.md);
                     BUILTIN_SKILLS=none serves them alone
  --conformance      add the a2a-tck fixture skill and make it the default skill
exit codes: 0 stopped cleanly, 1 failed, 2 usage, 78 a bad setting`,
  keys: `usage: taskhandle keys rotate [--card]

Makes a new webhook signing key in KEYS_DIR (run it with the server's settings). A running server
signs with it within 10 s and keeps the old public key published until its tokens expire.
  --card             the agent card's signing key instead (KEYS_DIR/card/): a running server signs
                     the card with both keys within 10 s, the old one for CARD_KEY_OVERLAP_MS more
exit codes: 0 ok, 2 usage, 78 a bad setting`,
  card: `usage: taskhandle card verify URL [--a2a-version V] [--jwks URL] [--json]

Checks an A2A agent card's signatures (spec 8.4): fetches the card (URL: the card, or the agent's
base URL for its /.well-known/agent-card.json), canonicalizes it without "signatures" (RFC 8785),
finds each signature's key through its jku and kid, and prints which key verified it or why not.
Verified when at least one signature verifies. A jku off the card's own origin is not followed.
  --a2a-version V    the card of this protocol version (default 1.0; 0.3 for the v0.3 card)
  --jwks URL         trust this key set instead of the jku each signature names
  --json             print the checks as JSON
exit codes: 0 verified, 2 usage, 5 connection, 7 not a card, 9 no signature verifies`,
  'api-keys': `usage: taskhandle api-keys add --principal NAME --tenant NAME [--label TEXT]

Makes an API key for a principal of a tenant, adds its hash to API_KEYS_FILE and prints the key
once (it is not stored). A running server accepts it within seconds.
  --principal NAME   who the key is (required)
  --tenant NAME      the principal's tenant (required)
  --label TEXT       a note kept beside the hash
exit codes: 0 ok, 2 usage, 78 a bad setting (API_KEYS_FILE unset)`,
  submit: `usage: taskhandle submit <skill> --input JSON [--wait] [--message-id ID] [--json]
       taskhandle submit --text TEXT [--wait]

Sends a task (SendMessage with a data part {skill, input}, returnImmediately) and prints its id.
  --input JSON       the skill's input: a JSON object, or @FILE to read it from a file (default {})
  --text TEXT        add a text part (alone, it is a plain text message, for agents without skills)
  --message-id ID    the message id (default: a random one). Pass your own to make retries safe:
                     the same id sent again returns the same task and starts nothing new
  --wait             wait until the task completes, fails or needs input; exit code as the state
  --json             print the task as JSON instead of its id
${CONNECTION}
${EXITS}`,
  get: `usage: taskhandle get <id> [--json]

Shows a task: state, progress, status message, expiry and artifact names.
  --json             print the task as the agent returned it
${CONNECTION}
${EXITS}`,
  cancel: `usage: taskhandle cancel <id> [--json]

Cancels a task (CancelTask) and prints its new state. A task that has already ended cannot be
canceled: exit 7.
${CONNECTION}
${EXITS}`,
  list: `usage: taskhandle list [--state STATE] [--page-size N] [--page-token T] [--json]

Lists the caller's tasks, newest activity first (ListTasks). Anonymous callers see none.
  --state STATE      only tasks in this state (working, completed, input-required, TASK_STATE_... )
  --page-size N      at most N tasks (default 20)
  --page-token T     the next page (printed on stderr as "next page: T" when there is one)
  --json             print the ListTasks result as JSON
${CONNECTION}
${EXITS}`,
  result: `usage: taskhandle result <id> [-o FILE] [--json]

Writes a completed task's result: one file artifact as its bytes; otherwise each part in order
(text as text, data as JSON lines, files as bytes). A task that failed, was rejected or canceled
exits 1; one that has not finished exits 8 (6 if it waits for input).
  -o, --output FILE  write to FILE instead of stdout
  --json             print the artifacts as JSON
${CONNECTION}
${EXITS}`,
  watch: `usage: taskhandle watch <id> [--retry-for SECONDS] [--last-event-id ID]

Follows a task (SubscribeToTask over SSE) until it ends or needs input. On a terminal: a live
progress bar. Piped: one JSON event per line (NDJSON), as the agent sent them, in order.
A dropped stream or a restarted server is reconnected with Last-Event-ID: no event is lost.
Ctrl-C stops watching (exit 130), not the task: it prints the command that re-attaches.
  --retry-for S      give up (exit 5) after S seconds without reaching the agent (default 60)
  --last-event-id ID start after this event id instead of from the task as it stands
  --json             NDJSON even on a terminal
${CONNECTION}
${EXITS}`,
};

export const OVERVIEW = `usage: taskhandle <command> [options]

server:
  serve              run the agent (settings from the environment; see docs/settings.md)
  keys rotate        make a new webhook signing key (--card: the agent card's)
  api-keys add       make an API key for a principal of a tenant
  help [command]     this overview, or a command's options

client (speaks A2A v1.0 JSON-RPC to --url; works with any A2A agent):
  submit <skill>     send a task and print its id (--wait to wait for it)
  get <id>           show a task's state, progress and status message
  watch <id>         follow a task live (progress bar, or NDJSON when piped)
  cancel <id>        cancel a task
  result <id>        write a completed task's artifacts (-o FILE)
  list               list your tasks
  card verify URL    check an agent card's signatures (any A2A agent)

Run taskhandle <command> --help (or taskhandle help <command>) for its options. Docs: docs/cli.md
${CONNECTION}
${EXITS}`;
