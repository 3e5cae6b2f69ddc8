// Serves the skills of skills.mjs with createServer. Settings not given here come from the
// environment, else their defaults: PORT (41241), DATABASE_URL (sqlite:./data/taskhandle.db), ...
// (taskhandle's docs/settings.md lists them all).
import { createServer } from 'taskhandle';
import { report } from './skills.mjs';

const server = await createServer({ skills: [report], builtinSkills: false });

// Ctrl-C or a SIGTERM: stop taking work, let running jobs finish, close the store.
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => void server.close());
