import { createRequire } from 'node:module';
import type * as IpAddr from 'ipaddr.js';

// ipaddr.js is CommonJS typed as an ambient `export =` namespace: without esModuleInterop tsc refuses a
// default import, and Node's ESM loader sees no named exports in it, so load it the CommonJS way.
const ipaddr = createRequire(import.meta.url)('ipaddr.js') as typeof IpAddr;

/**
 * Which webhook destinations an operator has opened on purpose. Everything that is not public
 * unicast is refused unless it is listed here; there is deliberately no "allow all" switch.
 *
 * @example
 *   const policy = parseAllowList('127.0.0.0/8, ::1/128, hooks.internal.example');
 *   refuseAddress('127.0.0.1', policy); // undefined: allowed
 */
export interface AddressPolicy {
  /** CIDR ranges (single IPs become /32 or /128) whose addresses may be connected to. */
  readonly ranges: ReadonlyArray<readonly [IpAddr.IPv4 | IpAddr.IPv6, number]>;
  /** Host names (normalized by `normalizeHostName`) that may be used whatever they resolve to. */
  readonly hosts: ReadonlySet<string>;
  /**
   * Whether public unicast addresses may be used at all. False closes everything but the list (a
   * closed network; the conformance fixture): names not on it are then never even resolved.
   */
  readonly publicAllowed: boolean;
}

type IP = IpAddr.IPv4 | IpAddr.IPv6;

// DNS labels as operators write them; IDNs must be given in punycode (xn--...), as URL hosts are.
const HOST_NAME =
  /^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

/**
 * Parses the operator's allow-list: comma-separated CIDRs, single IPs and host names.
 * Throws an Error naming the first bad entry so a typo stops the server at startup instead of
 * silently leaving a range closed (or open).
 *
 * @example parseAllowList('10.0.0.0/8,localhost') // opens 10/8 and the name localhost
 */
export function parseAllowList(spec: string | undefined, publicAllowed = true): AddressPolicy {
  const ranges: Array<readonly [IP, number]> = [];
  const hosts = new Set<string>();
  for (const raw of (spec ?? '').split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const range = parseRange(entry);
    if (range) {
      ranges.push(range);
      continue;
    }
    const name = normalizeHostName(entry);
    if ('reason' in name) throw new Error(`push allow-list: "${entry}": ${name.reason}`);
    // A last label of digits is a mistyped address ("10.0.0"), never a name WHATWG URL would keep.
    if (HOST_NAME.test(name.host) && !/(^|\.)[0-9]+$/.test(name.host)) {
      hosts.add(name.host);
      continue;
    }
    throw new Error(`push allow-list: "${entry}" is not a CIDR, an IP address or a host name`);
  }
  return { ranges, hosts, publicAllowed };
}

function parseRange(entry: string): readonly [IP, number] | undefined {
  // Only the four-part decimal form for IPv4: "10" or "127.1" in a config file is a typo, not shorthand.
  const [addr, bits, ...rest] = entry.split('/');
  if (addr === undefined || rest.length > 0) return undefined;
  if (!ipaddr.IPv4.isValidFourPartDecimal(addr) && !ipaddr.IPv6.isValid(addr)) return undefined;
  if (bits === undefined) {
    const ip = ipaddr.parse(addr);
    return [ip, ip.kind() === 'ipv4' ? 32 : 128];
  }
  return ipaddr.isValidCIDR(entry) ? ipaddr.parseCIDR(entry) : undefined;
}

/**
 * A host name as every check compares it: lower case, with all trailing dots removed (`localhost.`,
 * `LOCALHOST..` and `localhost` are one name). A name with an empty label (`a..b`, `.a`) is refused:
 * resolvers treat it differently, so no check could say what it reaches.
 *
 * @example normalizeHostName('X.Internal..') // { host: 'x.internal' }
 */
export function normalizeHostName(raw: string): { host: string } | { reason: string } {
  const host = raw.toLowerCase().replace(/\.+$/, '');
  if (host === '') return { reason: `${JSON.stringify(raw)} is not a host name (nothing but dots)` };
  if (host.split('.').includes(''))
    return { reason: `${raw} is not a valid host name (an empty label: a leading dot or two dots in a row)` };
  return { host };
}

/** True when the operator listed this exact host name (case-insensitive, trailing dots ignored). */
export function isAllowedHost(host: string, policy: AddressPolicy): boolean {
  const name = normalizeHostName(host);
  return 'host' in name && policy.hosts.has(name.host);
}

const RANGE_NAMES: Record<string, string> = {
  unspecified: 'an unspecified',
  broadcast: 'a broadcast',
  multicast: 'a multicast',
  linkLocal: 'a link-local',
  loopback: 'a loopback',
  carrierGradeNat: 'a carrier-grade NAT (100.64.0.0/10)',
  private: 'a private',
  reserved: 'a reserved',
  uniqueLocal: 'a unique-local (fc00::/7)',
  rfc6052: 'a NAT64',
  rfc6145: 'an IPv4-translated',
  '6to4': 'a 6to4',
  teredo: 'a Teredo',
  ipv4Compatible: 'a deprecated IPv4-compatible',
};

// NAT64 well-known prefix: the last 32 bits are an IPv4 address the gateway will connect to.
const NAT64 = ipaddr.parseCIDR('64:ff9b::/96');
// ipaddr.js calls ::a.b.c.d "unicast"; some stacks still route these, and nobody serves webhooks there.
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');

/**
 * Classifies an address Node is about to connect to. Returns undefined if it may be used,
 * otherwise a short reason such as "127.0.0.1 is a loopback address".
 *
 * @example refuseAddress('::ffff:7f00:1', parseAllowList(undefined)) // "... is a loopback address"
 */
export function refuseAddress(ip: string, policy: AddressPolicy): string | undefined {
  return addressRefusal(ip, policy)?.reason;
}

/**
 * Ranges an operator may mean to open for webhooks (a receiver on this host or the same network):
 * a refusal of one says how. Metadata, multicast and the like are refused without that advice.
 */
const OPENABLE_RANGES = new Set(['loopback', 'private', 'uniqueLocal', 'carrierGradeNat']);

/** {@link refuseAddress}'s reason, and whether an operator may open the address (see OPENABLE_RANGES). */
export function addressRefusal(
  ip: string,
  policy: AddressPolicy,
): { reason: string; openable: boolean } | undefined {
  let parsed: IP;
  try {
    parsed = ipaddr.parse(ip);
  } catch {
    return { reason: `${ip} is not an IP address`, openable: false };
  }
  // The address the packets really go to: IPv4-mapped and NAT64 forms carry an IPv4 inside.
  const target = embeddedIPv4(parsed) ?? parsed;
  if (isAllowedRange(parsed, policy) || isAllowedRange(target, policy)) return undefined;
  let range: string = target.range();
  if (range === 'unicast' && target.kind() === 'ipv6' && target.match(IPV4_COMPATIBLE))
    range = 'ipv4Compatible';
  if (range === 'unicast') {
    return policy.publicAllowed
      ? undefined
      : { reason: `${ip} is not on the push allow-list (public addresses are closed)`, openable: true };
  }
  const via = target === parsed ? '' : ` (${target.toString()} inside)`;
  return {
    reason: `${ip} is ${RANGE_NAMES[range] ?? `a ${range}`} address${via}`,
    openable: OPENABLE_RANGES.has(range),
  };
}

/** What a caller is told about opening a refused destination: the operator's setting, spelled out. */
export const howToAllow = (entry: string): string =>
  `this server refuses it unless its operator allows it: start the server with PUSH_ALLOW=${entry} ` +
  '(a comma-separated list of CIDRs, IPs and host names)';

function embeddedIPv4(ip: IP): IpAddr.IPv4 | undefined {
  if (ip.kind() !== 'ipv6') return undefined;
  const v6 = ip as IpAddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address();
  if (v6.match(NAT64)) {
    const bytes = v6.toByteArray().slice(12);
    return ipaddr.fromByteArray(bytes) as IpAddr.IPv4;
  }
  return undefined;
}

function isAllowedRange(ip: IP, policy: AddressPolicy): boolean {
  return policy.ranges.some(([net, bits]) => net.kind() === ip.kind() && ip.match(net, bits));
}

// Cloud metadata services answer to these names (GCE, AWS EC2); every *.internal name is a private one.
const METADATA_NAMES = new Set(['metadata', 'instance-data']);

/** A reason to refuse a host name before resolving it, or undefined. */
function refuseHostName(host: string): string | undefined {
  if (host === 'localhost' || host.endsWith('.localhost'))
    return `${host} is a loopback host name; ${howToAllow(host)}`;
  if (METADATA_NAMES.has(host) || host.endsWith('.internal'))
    return `${host} is a cloud-metadata/internal host name`;
  return undefined;
}

/**
 * The check made when a push config is created. Host names that need DNS pass here; their
 * addresses are checked again when the webhook client connects (see webhook-client.ts).
 *
 * @example checkWebhookUrl('http://2130706433/', policy) // { reason: '127.0.0.1 is a loopback address' }
 */
export function checkWebhookUrl(raw: string, policy: AddressPolicy): { url: URL } | { reason: string } {
  let url: URL;
  try {
    // WHATWG parsing already turns 2130706433, 0x7f.1 and 017700000001 into 127.0.0.1.
    url = new URL(raw);
  } catch {
    return { reason: 'not a valid URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { reason: `protocol ${url.protocol} is not allowed (use http: or https:)` };
  }
  if (url.username !== '' || url.password !== '') return { reason: 'credentials in the URL are not allowed' };
  if (url.hostname === '') return { reason: 'the URL has no host' };

  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (ipaddr.isValid(host)) return checkedAddress(url, host, policy);
  const name = normalizeHostName(host);
  if ('reason' in name) return name;
  // "127.0.0.1.." is no address to WHATWG URL, but is one once its dots are gone: judge it as one.
  if (ipaddr.isValid(name.host)) return checkedAddress(url, name.host, policy);
  if (policy.hosts.has(name.host)) return { url };
  const reason = refuseHostName(name.host);
  return reason === undefined ? { url } : { reason };
}

/** A webhook URL whose host is an address: allowed, or refused saying (when it may be) how to allow it. */
function checkedAddress(url: URL, ip: string, policy: AddressPolicy): { url: URL } | { reason: string } {
  const refused = addressRefusal(ip, policy);
  if (!refused) return { url };
  if (!refused.openable) return { reason: refused.reason };
  // Public addresses closed (PUSH_ALLOW_PUBLIC=false): listing the address opens it too.
  return { reason: `${refused.reason}; ${howToAllow(ip)}` };
}
