import express from 'express';
import { createServer } from 'taskhandle';
import { countdown } from './my-skills.mjs';

const agent = await createServer({
  skills: [countdown],
  listen: false,
  publicUrl: 'http://127.0.0.1:3000/agent', // the path it is mounted at, included
  allowAnonymous: true,
});
const app = express();
app.use('/agent', agent.handler); // before any body parser: it reads its own bodies
app.use(express.json()); // your routes' parser, after it
app.get('/', (_req, res) => res.send('my app'));
const http = app.listen(3000, '127.0.0.1');

process.once('SIGINT', () => {
  http.close();
  agent.close();
});
