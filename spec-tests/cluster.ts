import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Agent, launch, writeApiKeys } from './harness.js';
import { dropSchema, freshSchema, postgresUrl } from './postgres.js';

/** Short leases and polls: a dead instance's task is taken over within about a second. */
export const CLUSTER_ENV = { LEASE_MS: '1000', RUNNER_POLL_MS: '100' };

/** Several server processes on one PostgreSQL schema: one service, as a load balancer sees it. */
export interface Cluster {
  /** The schema every instance uses (dropped by `close`). */
  schema: string;
  /** The signing keys every instance shares: any instance's JWKS verifies any instance's webhooks. */
  keysDir: string;
  /** The instances, in the order they came up (a killed one stays listed). */
  agents: Agent[];
  /** Starts one more instance on the same schema, keys and API keys (`env` on top of the cluster's). */
  add(env?: Record<string, string>): Promise<Agent>;
  /** Stops every instance, then drops the schema and the keys. */
  close(): Promise<void>;
}

export interface ClusterOptions {
  /** Settings of every instance, on top of CLUSTER_ENV and the database ones. */
  env?: Record<string, string>;
  /** Principals (name -> tenant) whose API keys every instance accepts. */
  apiKeys?: Record<string, string>;
}

/**
 * Starts `n` instances at once on a fresh schema (as a deploy does: the first start creates the
 * schema, concurrent ones must cope), sharing one API keys file and one KEYS_DIR.
 * @example
 *   const cluster = await startCluster(2, { apiKeys: { alice: 'acme' } });
 *   const [a, b] = cluster.agents;
 */
export async function startCluster(n: number, o: ClusterOptions = {}): Promise<Cluster> {
  const schema = freshSchema();
  const keysDir = mkdtempSync(join(tmpdir(), 'taskhandle-cluster-keys-'));
  const apiKeysFile = writeApiKeys(o.apiKeys ?? { alice: 'acme' });
  const agents: Agent[] = [];
  const add = async (env: Record<string, string> = {}) => {
    const agent = await launch({
      apiKeysFile,
      env: {
        ...CLUSTER_ENV,
        ...o.env,
        DATABASE_URL: postgresUrl,
        DATABASE_SCHEMA: schema,
        KEYS_DIR: keysDir,
        ...env,
      },
    });
    agents.push(agent);
    return agent;
  };
  const close = async () => {
    await Promise.all(agents.map((a) => a.stop()));
    await dropSchema(schema);
    rmSync(keysDir, { recursive: true, force: true });
  };
  const started = await Promise.allSettled(Array.from({ length: n }, () => add()));
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    await close();
    throw failed.reason;
  }
  return { schema, keysDir, agents, add, close };
}
