import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { tempPath } from './temp.js';

/**
 * Writes an API_KEYS_FILE (src/auth/api-keys.ts) in this run's temporary folder: one new key per
 * principal, of the tenant given (`{ alice: 'acme' }`). Returns its path and, per principal, the
 * headers that send its key.
 */
export function writeKeysFile<P extends string>(
  label: string,
  tenants: Record<P, string>,
): { file: string; headers: Record<P, Record<string, string>> } {
  const entries = (Object.keys(tenants) as P[]).map((principal) => ({
    principal,
    tenant: tenants[principal],
    key: `th_${randomBytes(32).toString('base64url')}`,
  }));
  const file = tempPath(`${label}-keys.json`);
  writeFileSync(file, JSON.stringify(entries.map(({ key, ...e }) => ({ ...e, keyHash: keyHash(key) }))));
  const headers = {} as Record<P, Record<string, string>>;
  for (const e of entries) headers[e.principal] = { Authorization: `Bearer ${e.key}` };
  return { file, headers };
}

// As taskhandle stores keys: SHA-256 of the key, never the key itself.
const keyHash = (key: string) => `sha256:${createHash('sha256').update(key).digest('hex')}`;
