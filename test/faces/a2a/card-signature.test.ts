import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { cardPayload, checkCardSignatures, signCard } from '../../../src/faces/a2a/card-signature.js';

const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const signer = { kid: 'k1', alg: 'ES256', key: privateKey };
const card = {
  name: 'A',
  description: 'é ☃',
  skills: [{ id: 's', tags: [] }],
  capabilities: { streaming: false },
};

describe('cardPayload (RFC 8785 without signatures)', () => {
  it('sorts keys, keeps no whitespace, writes non-ASCII as is, and leaves signatures out', () => {
    expect(cardPayload({ ...card, signatures: [{ protected: 'x', signature: 'y' }] })).toBe(
      '{"capabilities":{"streaming":false},"description":"é ☃","name":"A","skills":[{"id":"s","tags":[]}]}',
    );
  });

  it('numbers as RFC 8785 writes them (ES number serialization)', () => {
    expect(cardPayload({ a: 1e21, b: 0.000001, c: -0, d: 100 })).toBe(
      '{"a":1e+21,"b":0.000001,"c":0,"d":100}',
    );
  });
});

describe('checkCardSignatures', () => {
  it('a signed card checks with the public key; the signature is over the card without its signatures', async () => {
    const signed = await signCard(card, [signer], 'https://agent.example/.well-known/agent-card-jwks.json');
    expect(signed.signatures).toHaveLength(1);
    const checks = await checkCardSignatures(signed, async () => publicKey);
    expect(checks).toEqual([
      { ok: true, kid: 'k1', alg: 'ES256', jku: 'https://agent.example/.well-known/agent-card-jwks.json' },
    ]);
    // Signing again replaces the signatures rather than signing them.
    const twice = await signCard(signed, [signer], 'https://agent.example/jwks');
    expect(twice.signatures).toHaveLength(1);
    expect((await checkCardSignatures(twice, async () => publicKey))[0]?.ok).toBe(true);
  });

  it('hostile signature entries are refused one by one, each saying why, and never throw', async () => {
    const signed = await signCard(card, [signer], 'https://agent.example/jwks');
    const [good] = signed.signatures;
    const hostile = {
      ...card,
      signatures: [
        null,
        'text',
        { protected: 5, signature: 'x' },
        { protected: '!!!', signature: 'x' },
        { protected: Buffer.from('{"alg":"ES256"}').toString('base64url'), signature: 'x' },
        { protected: Buffer.from('{"alg":"none","kid":"k1"}').toString('base64url'), signature: '' },
        { protected: Buffer.from('{"alg":"HS256","kid":"k1"}').toString('base64url'), signature: 'x' },
        { ...good, signature: `${good?.signature.slice(0, -2)}AA` },
        good,
      ],
    };
    const checks = await checkCardSignatures(hostile, async () => publicKey);
    expect(checks.map((c) => c.ok)).toEqual([false, false, false, false, false, false, false, false, true]);
    for (const c of checks.slice(0, -1)) expect(c.ok === false && c.reason.length > 0).toBe(true);
    expect(checks[4]).toMatchObject({ reason: /names no kid/ });
    expect(checks[7]).toMatchObject({ reason: /does not match the card/ });
  });

  it('a card with no signatures (or not an array) gives no checks', async () => {
    expect(await checkCardSignatures(card, async () => publicKey)).toEqual([]);
    expect(await checkCardSignatures({ ...card, signatures: 'x' }, async () => publicKey)).toEqual([]);
  });
});
