import { describe, expect, it } from 'vitest';
import {
  checkWebhookUrl,
  normalizeHostName,
  parseAllowList,
  refuseAddress,
} from '../../src/push/address-policy.js';

const closed = parseAllowList(undefined);

function reasonFor(raw: string, policy = closed): string | undefined {
  const checked = checkWebhookUrl(raw, policy);
  return 'reason' in checked ? checked.reason : undefined;
}

describe('checkWebhookUrl with no allow-list', () => {
  // [url, fragment of the reason]
  const refused: Array<[string, string]> = [
    ['http://127.0.0.1/', '127.0.0.1 is a loopback'],
    // WHATWG URL turns shorthand, decimal, hex and octal IPv4 hosts into dotted quads before we look.
    ['http://127.1/', '127.0.0.1 is a loopback'],
    ['http://2130706433/', '127.0.0.1 is a loopback'],
    ['http://0x7f000001/', '127.0.0.1 is a loopback'],
    ['http://0x7f.1/', '127.0.0.1 is a loopback'],
    ['http://017700000001/', '127.0.0.1 is a loopback'],
    ['http://127.0.0.1./', '127.0.0.1 is a loopback'],
    ['http://[::1]/', '::1 is a loopback'],
    ['http://[::ffff:127.0.0.1]/', 'loopback'],
    ['http://[::ffff:7f00:1]/', 'loopback'],
    ['http://[64:ff9b::7f00:1]/', 'loopback address (127.0.0.1 inside)'],
    ['http://[::127.0.0.1]/', 'IPv4-compatible'],
    ['http://10.1.2.3/', 'private'],
    ['http://172.16.0.1/', 'private'],
    ['http://192.168.1.1/', 'private'],
    ['http://169.254.169.254/latest/meta-data', 'link-local'],
    ['http://100.64.0.1/', 'carrier-grade NAT'],
    ['http://0.0.0.0/', 'unspecified'],
    ['http://0/', 'unspecified'],
    ['http://[::]/', 'unspecified'],
    ['http://224.0.0.1/', 'multicast'],
    ['http://255.255.255.255/', 'broadcast'],
    ['http://240.0.0.1/', 'reserved'],
    ['http://[fe80::1]/', 'link-local'],
    ['http://[fc00::1]/', 'unique-local'],
    ['http://[fd00:ec2::254]/', 'unique-local'],
    ['http://[ff02::1]/', 'multicast'],
    ['http://[2002:7f00:1::]/', '6to4'],
    ['http://[2001::1]/', 'Teredo'],
    ['http://localhost/', 'localhost is a loopback host name'],
    ['http://LOCALHOST./', 'loopback host name'],
    ['http://foo.localhost/', 'loopback host name'],
    ['http://metadata.google.internal/', 'metadata'],
    ['http://metadata/computeMetadata/v1/', 'metadata'],
    ['http://instance-data/', 'metadata'],
    ['ftp://example.com/', 'protocol ftp:'],
    ['http://user:pw@example.com/', 'credentials'],
    ['not-a-url', 'not a valid URL'],
  ];
  it.each(refused)('refuses %s', (raw, fragment) => {
    expect(reasonFor(raw)).toContain(fragment);
  });

  const accepted = [
    'https://example.com/hook',
    'http://93.184.216.34/',
    'http://[2606:2800:220:1:248:1893:25c8:1946]/',
    // NAT64 of a public address is how IPv6-only networks reach IPv4 receivers.
    'http://[64:ff9b::5db8:d822]/',
    // A name that needs DNS passes here; its addresses are checked when the client connects.
    'https://hooks.example.net:8443/a?b=c',
  ];
  it.each(accepted)('accepts %s', (raw) => {
    const checked = checkWebhookUrl(raw, closed);
    expect(checked).toHaveProperty('url');
  });
});

describe('parseAllowList', () => {
  it('a CIDR opens the addresses inside it and nothing else', () => {
    const policy = parseAllowList('127.0.0.0/8');
    expect(reasonFor('http://127.0.0.1:8080/', policy)).toBeUndefined();
    expect(reasonFor('http://127.1/', policy)).toBeUndefined();
    expect(reasonFor('http://[::ffff:127.0.0.1]/', policy)).toBeUndefined();
    expect(reasonFor('http://10.0.0.1/', policy)).toContain('private');
    expect(reasonFor('http://[::1]/', policy)).toContain('loopback');
    // Opening a range does not open a refused name that may resolve into it.
    expect(reasonFor('http://localhost/', policy)).toContain('loopback host name');
  });

  it('single IPs and IPv6 CIDRs', () => {
    const policy = parseAllowList(' 10.0.0.5 , ::1/128,fd00::/8 ');
    expect(refuseAddress('10.0.0.5', policy)).toBeUndefined();
    expect(refuseAddress('10.0.0.6', policy)).toContain('private');
    expect(refuseAddress('::1', policy)).toBeUndefined();
    expect(refuseAddress('fd12::1', policy)).toBeUndefined();
    expect(refuseAddress('fc00::1', policy)).toContain('unique-local');
  });

  it('a host name opens that exact name, case-insensitively and ignoring a trailing dot', () => {
    const policy = parseAllowList('localhost,Hooks.Internal.Example.');
    expect(reasonFor('http://localhost:1234/', policy)).toBeUndefined();
    expect(reasonFor('http://LOCALHOST.:1234/', policy)).toBeUndefined();
    expect(reasonFor('http://hooks.internal.example/', policy)).toBeUndefined();
    expect(reasonFor('http://foo.localhost/', policy)).toContain('loopback host name');
    // A name does not open the addresses it may resolve to when they are written literally.
    expect(reasonFor('http://127.0.0.1/', policy)).toContain('loopback');
  });

  it('empty and missing specs open nothing', () => {
    for (const spec of [undefined, '', ' , ']) {
      const policy = parseAllowList(spec);
      expect(policy.ranges).toHaveLength(0);
      expect(policy.hosts.size).toBe(0);
    }
  });

  it.each([
    '127.0.0.0/33',
    '::1/129',
    '10.0.0',
    '127.1',
    '10.0.0.0/8/8',
    'http://example.com',
    'exa mple.com',
    'bad_-.',
    '-leading.example',
  ])('throws on the bad entry %j, naming it', (entry) => {
    expect(() => parseAllowList(`10.0.0.0/8,${entry}`)).toThrow(entry);
  });
});

describe('host names are normalised before every check (trailing dots, case, empty labels)', () => {
  it.each([
    ['http://localhost./', 'localhost is a loopback host name'],
    ['http://localhost../', 'localhost is a loopback host name'],
    ['http://LOCALHOST.../', 'localhost is a loopback host name'],
    ['http://foo.localhost../', 'foo.localhost is a loopback host name'],
    ['http://x.internal./', 'x.internal is a cloud-metadata/internal host name'],
    ['http://x.internal../', 'x.internal is a cloud-metadata/internal host name'],
    ['http://METADATA../', 'metadata is a cloud-metadata/internal host name'],
    // Not an address to WHATWG URL, but one once the dots are gone.
    ['http://127.0.0.1../', '127.0.0.1 is a loopback address'],
  ])('regression: %s cannot slip past the name checks', (raw, reason) => {
    // The reason, before the advice on opening it (see the PUSH_ALLOW test).
    expect(reasonFor(raw)?.split(';')[0]).toBe(reason);
  });

  it.each(['http://a..b/', 'http://.example.com/', 'http://localhost..internal/', 'http://../'])(
    'refuses %s: an empty label, with a reason saying so',
    (raw) => {
      expect(reasonFor(raw)).toMatch(/not a (valid )?host name/);
    },
  );

  it('an allow-listed name matches whatever trailing dots and case the URL has', () => {
    const policy = parseAllowList('hooks.internal.example..', false);
    expect(policy.hosts).toEqual(new Set(['hooks.internal.example']));
    expect(reasonFor('http://HOOKS.internal.example.../', policy)).toBeUndefined();
    expect(reasonFor('http://hooks..internal.example/', policy)).toContain('empty label');
  });

  it.each(['a..b', '.example.com', '..'])('the allow-list refuses %j, saying why', (entry) => {
    expect(() => parseAllowList(entry)).toThrow(/empty label|nothing but dots/);
  });

  it('normalizeHostName', () => {
    expect(normalizeHostName('X.Internal..')).toEqual({ host: 'x.internal' });
    expect(normalizeHostName('a..b')).toHaveProperty('reason');
  });
});

describe('refuseAddress', () => {
  it('classifies what a resolver returns', () => {
    expect(refuseAddress('8.8.8.8', closed)).toBeUndefined();
    expect(refuseAddress('2001:4860:4860::8888', closed)).toBeUndefined();
    expect(refuseAddress('127.0.0.1', closed)).toBe('127.0.0.1 is a loopback address');
    expect(refuseAddress('::ffff:169.254.169.254', closed)).toContain('link-local');
    expect(refuseAddress('64:ff9b::a00:1', closed)).toContain('private address (10.0.0.1 inside)');
    expect(refuseAddress('64:ff9b:1::1', closed)).toContain('NAT64');
    expect(refuseAddress('2001:db8::1', closed)).toContain('reserved');
    expect(refuseAddress('fe80::1%eth0', closed)).toContain('link-local');
    expect(refuseAddress('nonsense', closed)).toContain('not an IP address');
  });
});

describe('a refusal an operator may lift says how (PUSH_ALLOW)', () => {
  it.each([
    ['http://127.0.0.1:9/hook', 'PUSH_ALLOW=127.0.0.1'],
    ['http://[::1]/hook', 'PUSH_ALLOW=::1'],
    ['http://localhost:8080/hook', 'PUSH_ALLOW=localhost'],
    ['http://192.168.1.20/hook', 'PUSH_ALLOW=192.168.1.20'],
    ['http://[fd00::1]/hook', 'PUSH_ALLOW=fd00::1'],
  ])('%s names %s', (raw, setting) => {
    expect(reasonFor(raw)).toContain(`start the server with ${setting} `);
  });

  it('an address on no allow-list while public ones are closed names PUSH_ALLOW too', () => {
    expect(reasonFor('http://93.184.216.34/', parseAllowList('', false))).toContain(
      'PUSH_ALLOW=93.184.216.34',
    );
  });

  it.each(['http://169.254.169.254/latest', 'http://metadata./', 'http://224.0.0.1/', 'http://0.0.0.0/'])(
    'no advice to open %s (metadata, multicast, unspecified)',
    (raw) => {
      expect(reasonFor(raw)).not.toContain('PUSH_ALLOW');
    },
  );
});
