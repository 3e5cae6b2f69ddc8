import { createServer } from 'taskhandle';
import { countdown } from './skills.mjs';

const server = await createServer({ skills: [countdown] });
console.log(`serving ${server.skills.map((s) => s.id).join(', ')} at ${server.url}`);
process.once('SIGINT', () => server.close());
