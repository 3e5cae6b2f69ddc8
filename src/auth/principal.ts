import type { CallerPolicy } from '../engine/grant.js';
import { approverName } from '../engine/grant.js';

/** Who is calling: an authenticated principal of a tenant, or the anonymous caller. */
export interface Principal {
  /** The principal's id within its tenant (an API key's principal, a JWT's subject). */
  id: string;
  tenant: string;
  via: 'api-key' | 'jwt' | 'anonymous';
  /** Skills it may use; undefined for all. */
  skills?: ReadonlySet<string>;
  /** Roles its token grants (JWT_ROLES_CLAIM); OPERATORS may name them as `role:NAME`. */
  roles?: ReadonlySet<string>;
  /**
   * A worker's credential (WORKERS names it): it claims and works tasks at /v1/workers, and calls
   * no skill over the caller faces (docs/workers.md).
   */
  worker?: boolean;
}

export const ANONYMOUS: Principal = { id: 'anonymous', tenant: '', via: 'anonymous' };

/**
 * The owner the engine scopes tasks by. Tenant and id are escaped so that no pair of names can
 * produce another pair's key ("a/b" + "c" vs "a" + "b/c"). API-key and JWT principals live apart:
 * a token issuer must not reach an API-key holder's tasks by naming the same tenant and subject.
 */
export const ownerKey = (p: Principal): string =>
  p.via === 'anonymous'
    ? 'anonymous'
    : `${p.via}:${encodeURIComponent(p.tenant)}/${encodeURIComponent(p.id)}`;

/**
 * The tenant of an owner key, whose principals share one fair share of the runner slots
 * (engine/fair-share.ts): "api-key:acme/alice" -> "api-key:acme". Keys of API keys and of tokens stay
 * apart, as their tasks do: a token issuer naming a tenant does not join the API-key tenant's share.
 */
export const tenantOf = (owner: string): string => {
  const slash = owner.indexOf('/');
  return slash < 0 ? owner : owner.slice(0, slash);
};

/**
 * The name approver lists call a principal by, which says how it authenticated: "tenant/principal"
 * for an API key's, "jwt:tenant/principal" for a token's; none for the anonymous caller.
 */
export const approverNameOf = (p: Principal): string | undefined =>
  p.via === 'anonymous' ? undefined : approverName(p.via, p.tenant, p.id);

/** What a principal may do: its skills, and the name approver lists know it by. */
export const policyOf = (p: Principal): CallerPolicy => ({
  skills: p.skills,
  approverName: approverNameOf(p),
  worker: p.worker,
});

/**
 * The operator name of the local user of an anonymous server on a loopback address (see
 * faces/console/access.ts): no OPERATORS entry can spell it.
 */
export const LOCAL_OPERATOR = 'local';

/**
 * The names OPERATORS may know a principal by: its approver name and `role:NAME` for each role its
 * token grants. The anonymous caller has none: whether it may use the console is the console's
 * decision (a loopback server's local user, see faces/console/access.ts).
 */
export const operatorNamesOf = (p: Principal): string[] => {
  const name = approverNameOf(p);
  return [...(name === undefined ? [] : [name]), ...[...(p.roles ?? [])].map((r) => `role:${r}`)];
};
