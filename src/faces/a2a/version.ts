import type { IncomingMessage } from 'node:http';
import { VersionNotSupportedError } from '@a2a-js/sdk/errors';

export type ProtocolVersion = '1.0' | '0.3';

/** What this agent speaks, newest first (as VersionNotSupportedError lists it). */
export const SUPPORTED_VERSIONS: readonly ProtocolVersion[] = ['1.0', '0.3'];

/**
 * `Major.Minor`, optionally with a patch number: the spec (3.6) says a patch number is not to be
 * considered, so `1.0.2` is 1.0. A bare `1` is refused: it names no minor version.
 */
const MAJOR_MINOR = /^(\d{1,4})\.(\d{1,4})(?:\.\d{1,4})?$/;

/**
 * The protocol version a request asks for: the `A2A-Version` header, else the `A2A-Version` request
 * parameter (spec 3.6.1). Per the spec, a request with neither (or an empty one) is a v0.3 request:
 * curl users must send `A2A-Version: 1.0` to speak v1.0. See docs/protocol-versions.md.
 */
export function requestedVersion(
  req: IncomingMessage,
): { ok: true; version: ProtocolVersion } | { ok: false; message: string } {
  const raw = req.headers['a2a-version'] ?? fromQuery(req.url);
  const value = (Array.isArray(raw) ? raw[0] : raw)?.trim();
  if (!value) return { ok: true, version: '0.3' };
  const version = versionOf(value);
  if (version === '1.0' || version === '0.3') return { ok: true, version };
  return {
    ok: false,
    message: `A2A-Version ${unsupported(value)}; this agent speaks 1.0 and 0.3: send A2A-Version: 1.0, or no A2A-Version (or 0.3) for v0.3`,
  };
}

/** The `Major.Minor` an `A2A-Version` value names (`1.0.2` -> `1.0`), or undefined when it names none. */
export function versionOf(value: string): string | undefined {
  const m = MAJOR_MINOR.exec(value.trim());
  return m ? `${Number(m[1])}.${Number(m[2])}` : undefined;
}

/** A refused version value as the refusal shows it: `"1" is not a Major.Minor version`. */
export function unsupported(value: string): string {
  const why = /^\d+$/.test(value.trim()) ? 'is not a Major.Minor version' : 'is not supported';
  return `${JSON.stringify(value.trim().slice(0, 40))} ${why}`;
}

/** The A2A error for a version we do not speak, with the versions we do (in its ErrorInfo). */
export const versionNotSupported = (message: string): VersionNotSupportedError =>
  new VersionNotSupportedError({ message, metadata: { supportedVersions: SUPPORTED_VERSIONS.join(',') } });

function fromQuery(url: string | undefined): string | undefined {
  const q = url?.indexOf('?') ?? -1;
  if (!url || q < 0) return undefined;
  return new URLSearchParams(url.slice(q + 1)).get('A2A-Version') ?? undefined;
}

/** Each JSON-RPC method as v1.0 and v0.3 name it (`undefined`: that version has no such method). */
const METHOD_NAMES: [v1: string, v03: string | undefined][] = [
  ['SendMessage', 'message/send'],
  ['SendStreamingMessage', 'message/stream'],
  ['GetTask', 'tasks/get'],
  ['ListTasks', undefined],
  ['CancelTask', 'tasks/cancel'],
  ['SubscribeToTask', 'tasks/resubscribe'],
  ['CreateTaskPushNotificationConfig', 'tasks/pushNotificationConfig/set'],
  ['GetTaskPushNotificationConfig', 'tasks/pushNotificationConfig/get'],
  ['ListTaskPushNotificationConfigs', 'tasks/pushNotificationConfig/list'],
  ['DeleteTaskPushNotificationConfig', 'tasks/pushNotificationConfig/delete'],
  ['GetExtendedAgentCard', 'agent/getAuthenticatedExtendedCard'],
];

/**
 * A method of the other protocol version than the request's, said with what to do: the most
 * likely first mistake is a v1.0 method sent without `A2A-Version: 1.0`. `undefined` when the
 * method is not the other version's either.
 *
 * @example otherVersionMethod('0.3', 'SendMessage') // "SendMessage is a v1.0 method; send ..."
 */
export function otherVersionMethod(version: ProtocolVersion, method: string): string | undefined {
  if (version === '0.3') {
    const pair = METHOD_NAMES.find(([v1]) => v1 === method);
    if (!pair) return undefined;
    const own = pair[1] ? `its v0.3 name is ${pair[1]}` : 'v0.3 has no such method';
    return `${method} is a v1.0 method; send the header A2A-Version: 1.0 (a request without it is v0.3: ${own})`;
  }
  const pair = METHOD_NAMES.find(([, v03]) => v03 === method);
  if (!pair) return undefined;
  return `${method} is a v0.3 method; send no A2A-Version header (or A2A-Version: 0.3), or call its v1.0 name ${pair[0]}`;
}
