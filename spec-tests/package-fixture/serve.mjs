// A user's own server script over the installed taskhandle: node serve.mjs <sqlite file>. Prints
// {"url", "skills"} once listening; SIGTERM closes the server, and the process then ends by itself.
import { createServer } from 'taskhandle';
import { tally } from './my-skills.mjs';

const server = await createServer({
  port: 0,
  host: '127.0.0.1',
  database: `sqlite:${process.argv[2]}`,
  logLevel: 'warn',
  builtinSkills: false,
  skills: [tally],
  env: {},
});
console.log(JSON.stringify({ url: server.url, skills: server.skills }));
process.once('SIGTERM', () => void server.close());
