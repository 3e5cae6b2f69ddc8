// A webhook receiver that checks taskhandle's push notifications the way a peer agent should:
// verify the signature against the agent's published keys, check that the body is the one signed,
// and drop repeats by notification id (delivery is at least once).
//
//   AGENT_URL=http://127.0.0.1:41241 PORT=8787 node examples/webhook-receiver.mjs
//
// It prints one JSON line per notification and answers 204 (401 when the signature does not verify).
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { createRemoteJWKSet, jwtVerify } from 'jose';

const agent = process.env.AGENT_URL ?? 'http://127.0.0.1:41241';
const port = Number(process.env.PORT ?? 8787);
// Fetched once and cached; fetched again when a token names a key it has not seen (a rotation).
const keys = createRemoteJWKSet(new URL('/.well-known/jwks.json', agent));
const seen = new Set();

const server = createServer(async (req, res) => {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const body = Buffer.concat(chunks).toString('utf8');
  const id = req.headers['x-a2a-notification-id'];
  try {
    const { payload } = await jwtVerify(String(req.headers['x-a2a-notification-signature']), keys, {
      issuer: agent,
      // The URL you registered (without its #fragment): behind a proxy, write it out instead.
      audience: `http://${req.headers.host}${req.url}`,
    });
    const sha256 = createHash('sha256').update(body, 'utf8').digest('hex');
    if (payload.request_body_sha256 !== sha256) throw new Error('the body is not the one that was signed');
    if (payload.notificationId !== id) throw new Error('the id header is not the one that was signed');
  } catch (err) {
    console.log(JSON.stringify({ verified: false, id, error: String(err) }));
    res.writeHead(401).end();
    return;
  }
  res.writeHead(204).end();
  const repeat = seen.has(id);
  seen.add(id);
  const token = req.headers['x-a2a-notification-token'];
  console.log(JSON.stringify({ verified: true, repeat, id, token, body: JSON.parse(body) }));
});
server.listen(port, '127.0.0.1', () => {
  console.log(JSON.stringify({ listening: `http://127.0.0.1:${server.address().port}` }));
});
