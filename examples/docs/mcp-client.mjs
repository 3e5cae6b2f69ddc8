import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const client = new Client({ name: 'my-host', version: '1.0.0' });
await client.connect(
  new StreamableHTTPClientTransport(new URL('http://127.0.0.1:41241/mcp'), {
    requestInit: { headers: { Authorization: `Bearer ${process.env.KEY}` } }, // when the server takes API keys
  }),
);
await client.listTools(); // tells the client which tools take tasks
for await (const m of client.experimental.tasks.callToolStream({ name: 'export', arguments: { rows: 3 } })) {
  if (m.type === 'taskCreated') console.log('task', m.task.taskId); // the handle, at once
  if (m.type === 'result') console.log(m.result.content);
}
