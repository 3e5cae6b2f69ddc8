import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AgentCard } from '@a2a-js/sdk';
import { z } from 'zod';
import { ConfigError } from '../../config.js';
import type { AnySkill } from '../../engine/skill.js';
import { HANDLE_EXTENSION_CARD_ENTRY } from './handle-extension.js';

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

export interface PublishedCard {
  /** The card as served: v1.0 JSON plus the fields v0.3 clients read. */
  json: Record<string, unknown>;
  body: string;
  etag: string;
  /** The v1.0 card as SDK object, for the SDK's transports. */
  sdk: AgentCard;
  /** What authenticated callers get from GetExtendedAgentCard: every skill; undefined when anonymous. */
  extended?: AgentCard;
}

/** How callers authenticate, as configured: the card's security schemes say exactly this. */
export interface CardSecurity {
  apiKeys: boolean;
  jwt: boolean;
  /** Skills listed only in the extended card (for authenticated callers). */
  extendedSkills: ReadonlySet<string>;
}

/**
 * Each scheme in both versions' shapes at once: v1.0 reads the oneof field (`apiKeySecurityScheme`,
 * `httpAuthSecurityScheme`), v0.3 reads `type` and its fields; each ignores the other's.
 */
function securityOf(s: CardSecurity): Record<string, unknown> {
  if (!s.apiKeys && !s.jwt) return {};
  const schemes: Record<string, unknown> = {};
  const requirements: Record<string, unknown>[] = [];
  const legacy: Record<string, string[]>[] = [];
  if (s.apiKeys) {
    const description = 'An API key (th_...), in X-API-Key or as Authorization: Bearer';
    schemes.apiKey = {
      apiKeySecurityScheme: { description, location: 'header', name: 'X-API-Key' },
      type: 'apiKey',
      in: 'header',
      name: 'X-API-Key',
      description,
    };
    requirements.push({ schemes: { apiKey: { list: [] } } });
    legacy.push({ apiKey: [] });
  }
  if (s.jwt) {
    const description = 'A JWT from the configured issuer, as Authorization: Bearer';
    schemes.bearer = {
      httpAuthSecurityScheme: { description, scheme: 'Bearer', bearerFormat: 'JWT' },
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
      description,
    };
    requirements.push({ schemes: { bearer: { list: [] } } });
    legacy.push({ bearer: [] });
  }
  return { securitySchemes: schemes, securityRequirements: requirements, security: legacy };
}

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
  let template: z.infer<typeof Template>;
  try {
    template = Template.parse(JSON.parse(readFileSync(file, 'utf8')));
  } catch (err) {
    throw new ConfigError(`AGENT_CARD_FILE=${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const authenticated = security.apiKeys || security.jwt;
  const jsonrpcUrl = `${baseUrl}/`;
  const restUrl = `${baseUrl}${REST_PATH}`;
  const v1 = {
    ...template,
    supportedInterfaces: [
      { url: jsonrpcUrl, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url: restUrl, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
      ...(grpcAddress ? [{ url: grpcAddress, protocolBinding: 'GRPC', protocolVersion: '1.0' }] : []),
      { url: jsonrpcUrl, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
      { url: restUrl, protocolBinding: 'HTTP+JSON', protocolVersion: '0.3' },
    ],
    capabilities: {
      streaming: true,
      pushNotifications: true,
      extendedAgentCard: authenticated,
      extensions: [HANDLE_EXTENSION_CARD_ENTRY],
    },
    skills: skills.filter((s) => !security.extendedSkills.has(s.id)).map(skillEntry),
    ...securityOf(security),
  };
  const json = {
    ...v1,
    // What v0.3 clients read (ignored by v1.0 clients).
    protocolVersion: '0.3.0',
    url: jsonrpcUrl,
    preferredTransport: 'JSONRPC',
    supportsAuthenticatedExtendedCard: authenticated,
    additionalInterfaces: [
      { url: jsonrpcUrl, transport: 'JSONRPC' },
      { url: restUrl, transport: 'HTTP+JSON' },
    ],
  };
  const body = JSON.stringify(json);
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  const extended = authenticated ? AgentCard.fromJSON({ ...v1, skills: skills.map(skillEntry) }) : undefined;
  return { json, body, etag, sdk: AgentCard.fromJSON(v1), extended };
}

const skillEntry = (s: AnySkill) => ({
  id: s.id,
  name: s.name ?? s.id,
  description: s.description,
  tags: s.tags ?? [],
  examples: s.examples ?? [],
});

/** Serves the card with an ETag (304 on a match) and a short public cache lifetime. */
export function serveCard(card: () => PublishedCard) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const { body, etag } = card();
    const headers = {
      ETag: etag,
      'Cache-Control': 'public, max-age=300',
      'Access-Control-Allow-Origin': '*',
    };
    if (req.headers['if-none-match'] === etag) {
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
