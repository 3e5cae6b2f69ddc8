import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'taskhandle';
import { countdown } from './my-skills.mjs';

const agent = await createServer({
  skills: [countdown],
  listen: false, // no port of its own: the server below serves it
  publicUrl: 'http://127.0.0.1:3000', // where callers reach it: the card and links start with it
  allowAnonymous: true, // only this machine reaches the server below; else apiKeysFile, jwt...
});
const http = createHttpServer((req, res) => {
  if (req.url === '/hello') return res.end('my own route\n');
  agent.handler(req, res); // everything else: the agent's faces
}).listen(3000, '127.0.0.1');

process.once('SIGINT', () => {
  http.close(); // no new connections
  agent.close(); // jobs released, the agent's streams ended, its store closed
});
