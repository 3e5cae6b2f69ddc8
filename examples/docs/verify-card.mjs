import canonicalize from 'canonicalize';
import { base64url, createRemoteJWKSet, decodeProtectedHeader, flattenedVerify } from 'jose';

const cardUrl = new URL('https://agent.example/.well-known/agent-card.json');
const res = await fetch(cardUrl, { headers: { 'A2A-Version': '1.0' } });
const card = /** @type {{ signatures?: { protected: string, signature: string }[] }} */ (await res.json());
const { signatures = [], ...unsigned } = card;
const payload = base64url.encode(canonicalize(unsigned) ?? '');
for (const signature of signatures) {
  const { jku, kid } = decodeProtectedHeader(signature);
  // Trust only a key set of the agent's own origin (or one you know): whoever could change the card
  // could name their own keys in it.
  if (!jku || new URL(jku).origin !== cardUrl.origin) continue;
  const keys = createRemoteJWKSet(new URL(jku));
  await flattenedVerify({ payload, ...signature }, keys, { algorithms: ['ES256'] });
  console.log('verified by', kid); // flattenedVerify throws instead when the card or key does not match
}
