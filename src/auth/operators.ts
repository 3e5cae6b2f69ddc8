import { listOf } from '../config/settings.js';
import { normalizeApproverName } from '../engine/grant.js';

/** An OPERATORS entry in the form principals are matched by (see auth/principal.ts operatorNamesOf). */
function normalizeOperator(entry: string): string | undefined {
  if (/^role:\S+$/.test(entry)) return entry;
  return normalizeApproverName(entry);
}

/**
 * OPERATORS (comma-separated), as the names the engine grants operator access to. An entry that is
 * none of the three forms throws, saying which and what the forms are.
 *
 * @example operatorsOf('ops/root, jwt:ops/bob, role:oncall') // Set { 'ops/root', 'jwt:ops/bob', 'role:oncall' }
 */
export function operatorsOf(list: string): Set<string> {
  const names = new Set<string>();
  for (const entry of listOf(list)) {
    const name = normalizeOperator(entry);
    if (name === undefined)
      throw new Error(
        `"${entry}": each entry must be "tenant/principal" (an API key), "jwt:tenant/principal" (a token's subject) or "role:NAME" (a JWT role)`,
      );
    names.add(name);
  }
  return names;
}
