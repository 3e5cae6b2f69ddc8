import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AgentCard } from '@a2a-js/sdk';
import { z } from 'zod';
import { ConfigError } from '../../config/error.js';
import type { AnySkill } from '../../engine/skill.js';
import { GENERATION_EXTENSION_CARD_ENTRY } from '../generation.js';
import { HANDLE_EXTENSION_CARD_ENTRY } from './handle-extension.js';
import { requestedVersion } from './version.js';

/** The extensions the card declares (task handles, task generations). */
const EXTENSIONS = [HANDLE_EXTENSION_CARD_ENTRY, GENERATION_EXTENSION_CARD_ENTRY];

/** An extension entry as v1.0's proto JSON writes it: `required: false`, the default, left out. */
function asProto<E extends { required: boolean }>(entry: E): E | Omit<E, 'required'> {
  if (entry.required) return entry;
  const { required: _default, ...rest } = entry;
  return rest;
}

/** The parts of agent-card.json an operator edits; URLs, skills and capabilities are filled in at start. */
const Template = z.looseObject({
  name: z.string().min(1),
  description: z.string().min(1),
  version: z.string().min(1),
  provider: z.object({ organization: z.string(), url: z.string() }).optional(),
  documentationUrl: z.string().optional(),
  iconUrl: z.string().optional(),
  defaultInputModes: z.array(z.string()).min(1),
  defaultOutputModes: z.array(z.string()).min(1),
});

/** One card as served: its JSON text and the validator that names it. */
export interface CardBody {
  body: string;
  etag: string;
}

export interface PublishedCard {
  /** The v1.0 card, exactly the v1.0 schema's fields, in the form spec 8.4.1 gives a signed card. */
  json: Record<string, unknown>;
  /** What a v1.0 client gets (one that sends `A2A-Version: 1.0`). */
  v1: CardBody;
  /** What a v0.3 client gets: the v1.0 card plus the v0.3 top-level fields it reads. */
  v03: CardBody;
  /** When this card was published (the Last-Modified of both bodies). */
  published: Date;
  /** The v1.0 card as SDK object, for the SDK's transports. */
  sdk: AgentCard;
  /** What authenticated callers get from GetExtendedAgentCard: every skill; undefined when anonymous. */
  extended?: AgentCard;
  /**
   * The extended card for v0.3 JSON-RPC callers, when signed: its signatures are over the v0.3 form
   * that transport sends (signed-card.ts). Unsigned cards have none.
   */
  extendedLegacy?: AgentCard;
  /** The forms before any signature: what a new key signs again. */
  forms: CardForms;
}

/** How callers authenticate, as configured: the card's security schemes say exactly this. */
export interface CardSecurity {
  apiKeys: boolean;
  jwt: boolean;
  /** Skills listed only in the extended card (for authenticated callers). */
  extendedSkills: ReadonlySet<string>;
}

/**
 * The security schemes in two shapes. v1.0 (the `A2A-Version: 1.0` card): the oneof field
 * (`apiKeySecurityScheme`, `httpAuthSecurityScheme`) alone. v0.3: each scheme in both versions' shapes
 * at once (a v1.0 client that sends no version gets it too): v1.0 reads the oneof field, v0.3 reads
 * `type` and its fields; each ignores the other's. A requirement's empty scope list is left out of
 * the v1.0 shape, as spec 8.4.1 says a signed card's default values are.
 */
function securityOf(s: CardSecurity): { v1: Record<string, unknown>; v03: Record<string, unknown> } {
  if (!s.apiKeys && !s.jwt) return { v1: {}, v03: {} };
  const schemes: Record<string, unknown> = {};
  const hybrid: Record<string, unknown> = {};
  const requirements: Record<string, unknown>[] = [];
  const hybridRequirements: Record<string, unknown>[] = [];
  const legacy: Record<string, string[]>[] = [];
  if (s.apiKeys) {
    const description = 'An API key (th_...), in X-API-Key or as Authorization: Bearer';
    const oneof = { apiKeySecurityScheme: { description, location: 'header', name: 'X-API-Key' } };
    schemes.apiKey = oneof;
    hybrid.apiKey = { ...oneof, type: 'apiKey', in: 'header', name: 'X-API-Key', description };
    requirements.push({ schemes: { apiKey: {} } });
    hybridRequirements.push({ schemes: { apiKey: { list: [] } } });
    legacy.push({ apiKey: [] });
  }
  if (s.jwt) {
    const description = 'A JWT from the configured issuer, as Authorization: Bearer';
    const oneof = { httpAuthSecurityScheme: { description, scheme: 'Bearer', bearerFormat: 'JWT' } };
    schemes.bearer = oneof;
    hybrid.bearer = { ...oneof, type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description };
    requirements.push({ schemes: { bearer: {} } });
    hybridRequirements.push({ schemes: { bearer: { list: [] } } });
    legacy.push({ bearer: [] });
  }
  return {
    v1: { securitySchemes: schemes, securityRequirements: requirements },
    v03: { securitySchemes: hybrid, securityRequirements: hybridRequirements, security: legacy },
  };
}

/**
 * Where clients before v0.3 fetch the agent card (spec 0.2; the v0.3 path is
 * `/.well-known/agent-card.json`): a2a-js 0.2's `A2AClient`, a2a-python 0.2's card resolver, and what
 * still ships them (@ag-ui/a2a). The same card is served there, not a redirect: httpx (a2a-python)
 * follows no redirect by default.
 */
export const LEGACY_CARD_PATH = '/.well-known/agent.json';

/** JSON-RPC is served at the root (POST /), HTTP+JSON under this prefix. */
export const REST_PATH = '/rest';

/**
 * Builds the agent card from the template file, the skill registry and the public base URL.
 * Computed once at start: serving it is a constant write.
 */
export function publishCard(
  file: string,
  baseUrl: string,
  skills: readonly AnySkill[],
  security: CardSecurity = { apiKeys: false, jwt: false, extendedSkills: new Set() },
  /** The gRPC binding's `host:port` (a gRPC target, as clients dial it) when it is served. */
  grpcAddress?: string,
): PublishedCard {
  const authenticated = security.apiKeys || security.jwt;
  const jsonrpcUrl = `${baseUrl}/`;
  const restUrl = `${baseUrl}${REST_PATH}`;
  const secured = securityOf(security);
  const capabilities = {
    streaming: true,
    pushNotifications: true,
    extendedAgentCard: authenticated,
  };
  const v1 = {
    ...readTemplate(file),
    supportedInterfaces: [
      { url: jsonrpcUrl, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url: restUrl, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
      ...(grpcAddress ? [{ url: grpcAddress, protocolBinding: 'GRPC', protocolVersion: '1.0' }] : []),
      { url: jsonrpcUrl, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
      { url: restUrl, protocolBinding: 'HTTP+JSON', protocolVersion: '0.3' },
    ],
    // `required: false` is the proto default, which a signed card leaves out (spec 8.4.1).
    capabilities: { ...capabilities, extensions: EXTENSIONS.map(asProto) },
    skills: skills.filter((s) => !security.extendedSkills.has(s.id)).map(skillEntry),
    ...secured.v1,
  };
  const legacy = {
    ...v1,
    // v0.3's AgentExtension.required is an optional field: set, it is said.
    capabilities: { ...capabilities, extensions: EXTENSIONS },
    ...secured.v03,
    ...legacyFields(jsonrpcUrl, restUrl, authenticated),
  };
  const extended = authenticated ? AgentCard.fromJSON({ ...v1, skills: skills.map(skillEntry) }) : undefined;
  // Whole seconds: Last-Modified and If-Modified-Since have no finer resolution.
  const published = new Date(Math.floor(Date.now() / 1000) * 1000);
  return assembleCard({ v1, v03: legacy, extended }, published);
}

/** The operator's part of the card (AGENT_CARD_FILE), checked: a bad file stops the start, saying why. */
function readTemplate(file: string): z.infer<typeof Template> {
  try {
    return Template.parse(JSON.parse(readFileSync(file, 'utf8')));
  } catch (err) {
    throw new ConfigError(`AGENT_CARD_FILE=${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** What v0.3 clients read; the v1.0 schema allows none of them at the top level. */
const legacyFields = (jsonrpcUrl: string, restUrl: string, authenticated: boolean) => ({
  protocolVersion: '0.3.0',
  url: jsonrpcUrl,
  preferredTransport: 'JSONRPC',
  supportsAuthenticatedExtendedCard: authenticated,
  additionalInterfaces: [
    { url: jsonrpcUrl, transport: 'JSONRPC' },
    { url: restUrl, transport: 'HTTP+JSON' },
  ],
});

/** The card's unsigned forms: what each protocol version's clients get, before any signature. */
export interface CardForms {
  v1: Record<string, unknown>;
  v03: Record<string, unknown>;
  extended?: AgentCard;
}

/**
 * The published card of `forms`, as they are (signed or not). `unsigned`: the forms before their
 * signatures, when they are signed; the ETags name those and the signing keys (`kids`), so every
 * instance that signs the same card with the same keys gives the same ETag, although ECDSA
 * signatures differ at each signing: the ETag is then weak (RFC 9110 8.8.1: the bodies are
 * equivalent, not byte-identical).
 */
export function assembleCard(
  forms: CardForms,
  published: Date,
  signed?: { unsigned: CardForms; kids: readonly string[]; extendedLegacy?: AgentCard },
): PublishedCard {
  const body = (card: Record<string, unknown>, unsigned: Record<string, unknown> | undefined) => {
    const text = JSON.stringify(card);
    if (!unsigned) return { body: text, etag: `"${digest(text)}"` };
    return { body: text, etag: `W/"${digest(`${JSON.stringify(unsigned)}\n${signed?.kids.join(' ')}`)}"` };
  };
  return {
    json: forms.v1,
    v1: body(forms.v1, signed?.unsigned.v1),
    v03: body(forms.v03, signed?.unsigned.v03),
    published,
    sdk: AgentCard.fromJSON(forms.v1),
    extended: forms.extended,
    extendedLegacy: signed?.extendedLegacy,
    forms: signed?.unsigned ?? forms,
  };
}

const digest = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 27);

const skillEntry = (s: AnySkill) => ({
  id: s.id,
  name: s.name ?? s.id,
  description: s.description,
  // Required, so present even when empty; `examples` is not, and an empty one is left out (spec 8.4.1).
  tags: s.tags ?? [],
  ...(s.examples?.length ? { examples: s.examples } : {}),
});

/**
 * Serves the card for the protocol version the request names (spec 3.6: the `A2A-Version` header
 * or request parameter): `1.0` gets the v1.0 card; `0.3`, or no version at all (spec 3.6.2: an
 * empty version is 0.3, and v0.3 clients send none), gets the v0.3 card, which is the v1.0 card
 * plus the v0.3 top-level fields (v1.0 clients ignore them: "SHOULD ignore unrecognized fields").
 * A version this agent does not speak also gets that card: it lists the versions it does speak.
 * Conditional requests: If-None-Match (ETag), else If-Modified-Since, answer 304.
 */
export function serveCard(card: () => PublishedCard) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const published = card();
    const asked = requestedVersion(req);
    const { body, etag } = asked.ok && asked.version === '1.0' ? published.v1 : published.v03;
    const headers = {
      ETag: etag,
      'Last-Modified': published.published.toUTCString(),
      'Cache-Control': 'public, max-age=300',
      Vary: 'A2A-Version',
      'Access-Control-Allow-Origin': '*',
    };
    if (notModified(req, etag, published.published)) {
      res.writeHead(304, headers).end();
      return;
    }
    res.writeHead(200, {
      ...headers,
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(body),
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  };
}

/**
 * RFC 9110 13.1: If-None-Match decides when present (compared weakly: `W/"x"` matches `"x"`);
 * If-Modified-Since only without it.
 */
function notModified(req: IncomingMessage, etag: string, published: Date): boolean {
  const match = req.headers['if-none-match'];
  if (match !== undefined) {
    const ours = etag.replace(/^W\//, '');
    return match.split(',').some((t) => {
      const tag = t.trim().replace(/^W\//, '');
      return tag === ours || tag === '*';
    });
  }
  const since = Date.parse(req.headers['if-modified-since'] ?? '');
  return !Number.isNaN(since) && published.getTime() <= since;
}
