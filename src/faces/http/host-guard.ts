import type { IncomingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';
import { isLoopback } from '../../auth/open.js';

/**
 * DNS rebinding: a web page on `evil.example` rebinds its own name to 127.0.0.1 and calls the
 * server from its visitor's browser, which sends `Host: evil.example:41241` and, from a script,
 * `Origin: http://evil.example:41241`. A server that serves anonymous callers would take it as the
 * local user. So on such a server a request must name the server itself: its Host a loopback
 * name, an IP address (a rebinding page never has one: its name is the attack), the PUBLIC_URL
 * host or one ALLOWED_HOSTS lists; a browser's Origin this server's own, a loopback one, a host of
 * those, or an origin MCP_ALLOWED_ORIGINS lists. A request without Host or Origin (a client that is
 * not a browser, HTTP/1.0, a gRPC call without authority) passes: browsers always send Host.
 */
export interface HostRule {
  /** The server's public base URL (PUBLIC_URL, else where it listens); empty until it listens. */
  baseUrl: () => string;
  /** ALLOWED_HOSTS: further host names (lower-case, no port). */
  hosts: ReadonlySet<string>;
  /** Further browser origins (MCP_ALLOWED_ORIGINS), as `URL.origin`. */
  origins: ReadonlySet<string>;
}

/** `localhost`, its subdomains (RFC 6761: they resolve to loopback too), 127.x and ::1. */
const isLoopbackName = (host: string): boolean => isLoopback(host) || host.endsWith('.localhost');

/**
 * `Host: a.b:41241` -> `a.b`; `[::1]:41241` -> `::1` (lower-case). A bracketed host followed by
 * anything but a port (`[::1]evil.example`) is kept whole: it names no address, so it is refused.
 */
function hostName(host: string): string {
  const h = host.trim().toLowerCase();
  if (h.startsWith('[')) return /^\[([^\]]+)\](?::\d*)?$/.exec(h)?.[1] ?? h;
  const colon = h.lastIndexOf(':');
  return colon >= 0 && h.indexOf(':') === colon ? h.slice(0, colon) : h;
}

/** The host name of the server's base URL (an IPv6 address without brackets); empty until it listens. */
function publicHost(rule: HostRule): string {
  const base = rule.baseUrl();
  return base ? new URL(base).hostname.replace(/^\[|\]$/g, '') : '';
}

/**
 * Why this request does not name the server, in words naming the setting that would let it; or
 * undefined when it does: its Host, then its Origin.
 */
export function foreignHost(headers: IncomingHttpHeaders, rule: HostRule): string | undefined {
  return foreignHostHeader(headers.host, rule) ?? foreignOrigin(headers.origin, rule);
}

function foreignHostHeader(host: string | undefined, rule: HostRule): string | undefined {
  if (host === undefined || host === '') return undefined;
  const name = hostName(host);
  if (isIP(name) !== 0 || isLoopbackName(name) || rule.hosts.has(name) || name === publicHost(rule))
    return undefined;
  return (
    `Host ${JSON.stringify(host.slice(0, 200))} is not a name of this server, which serves anonymous callers ` +
    '(a page rebinding its name to this address would be taken for the local user); ' +
    'an operator who means it lists the name in ALLOWED_HOSTS (comma-separated), or sets PUBLIC_URL'
  );
}

function foreignOrigin(origin: string | undefined, rule: HostRule): string | undefined {
  if (origin === undefined) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(origin);
  } catch {
    url = undefined; // "null" (a sandboxed page, a file) and anything unparsable
  }
  if (url) {
    const name = url.hostname.replace(/^\[|\]$/g, '');
    const base = rule.baseUrl();
    if (
      (base && url.origin === new URL(base).origin) ||
      rule.origins.has(url.origin) ||
      isLoopbackName(name) ||
      rule.hosts.has(name) ||
      name === publicHost(rule)
    )
      return undefined;
  }
  return (
    `Origin ${JSON.stringify(origin.slice(0, 200))} is a page of another site, and this server serves anonymous callers; ` +
    'an operator who trusts it lists its host in ALLOWED_HOSTS (or, for /mcp, the origin in MCP_ALLOWED_ORIGINS)'
  );
}
