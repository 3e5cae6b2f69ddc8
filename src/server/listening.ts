import type { Config } from '../config/settings.js';
import type { Backend } from './backend.js';
import { FACE_PATHS } from './face-paths.js';

/**
 * The `taskhandle listening` log line: where the server answers, who may call it, where its tasks
 * are kept and which faces it serves, so that a look at the log tells a misconfiguration.
 */
export function listeningLine(
  backend: Backend,
  config: Config,
  url: string,
  grpc: { address: string; tls: boolean } | undefined,
  listening: boolean,
) {
  const auth = authentication(backend, config);
  const database = dataLocation(config);
  const faces = FACE_PATHS;
  const skills = backend.skillSources.map((s) => ({ id: s.skill.id, from: s.from }));
  const summary = [
    listening ? `taskhandle listening on ${url}` : `taskhandle mounted, reached at ${url}`,
    `auth: ${auth.summary}`,
    `data: ${database.summary}`,
    `skills: ${skills.map((s) => `${s.id} (${s.from})`).join(', ')}`,
    `faces: A2A JSON-RPC ${faces.a2aJsonRpc}, A2A REST ${faces.a2aRest}${grpc ? `, A2A gRPC ${grpc.address} (${grpc.tls ? 'TLS' : 'plaintext'})` : ''}, jobs ${faces.jobs}, inbox ${faces.inbox}, MCP ${faces.mcp}`,
  ].join('; ');
  return {
    message: listening ? 'taskhandle listening' : 'taskhandle mounted',
    fields: {
      url,
      auth: auth.fields,
      database: database.fields,
      faces,
      ...(grpc && { grpc }),
      skills,
      summary,
    },
  };
}

function authentication(backend: Backend, config: Config) {
  if (backend.authenticator.anonymous) {
    const loopbackOnly = config.ALLOW_ANONYMOUS !== 'true';
    return {
      summary: loopbackOnly
        ? 'none (anonymous callers, this machine only)'
        : 'none (anonymous callers, ALLOW_ANONYMOUS=true)',
      fields: { anonymous: true, loopbackOnly },
    };
  }
  const ways: string[] = [];
  const fields: Record<string, unknown> = { anonymous: false };
  const keys = backend.authenticator.apiKeyCount;
  if (keys !== undefined) {
    ways.push(`API keys: ${keys} (${config.API_KEYS_FILE})`);
    fields.apiKeys = { count: keys, file: config.API_KEYS_FILE };
  }
  if (config.JWT_ISSUER) {
    ways.push(`JWT issuer ${config.JWT_ISSUER}`);
    fields.jwt = { issuer: config.JWT_ISSUER, audience: config.JWT_AUDIENCE };
  }
  return { summary: ways.join(', '), fields };
}

/** Where the tasks are: the SQLite file, or PostgreSQL's host and database (never its password). */
export function dataLocation(config: Config) {
  const d = config.database;
  if (d.kind === 'sqlite') return { summary: `SQLite ${d.path}`, fields: { kind: 'sqlite', path: d.path } };
  const u = new URL(d.url);
  const database = decodeURIComponent(u.pathname.replace(/^\//, '')) || '(default)';
  return {
    summary: `PostgreSQL ${u.host}/${database} (schema ${d.schema})`,
    fields: { kind: 'postgres', host: u.host, database, schema: d.schema },
  };
}
