import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The node:http floor: reads the whole JSON-RPC body, parses it and answers a small JSON object.
 * No store, no protocol: what any server on this machine pays at least per request.
 */
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    let id: unknown = null;
    try {
      id = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: unknown }).id ?? null;
    } catch {
      // answer anyway: the floor measures transport and parsing, not validation
    }
    const text = JSON.stringify({ jsonrpc: '2.0', id, result: { ok: true } });
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
    res.end(text);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  console.log(JSON.stringify({ msg: 'floor listening', url: `http://127.0.0.1:${port}` }));
});
process.once('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
