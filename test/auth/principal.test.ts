import { describe, expect, it } from 'vitest';
import { ANONYMOUS, ownerKey, type Principal } from '../../src/auth/principal.js';

const p = (tenant: string, id: string, via: Principal['via'] = 'api-key'): Principal => ({ id, tenant, via });

describe('ownerKey', () => {
  it('keeps pairs apart that plain joining would merge ("a/b" + "c" vs "a" + "b/c")', () => {
    expect(ownerKey(p('a/b', 'c'))).not.toBe(ownerKey(p('a', 'b/c')));
    expect(ownerKey(p('a%2Fb', 'c'))).not.toBe(ownerKey(p('a/b', 'c')));
    expect(ownerKey(p('a', 'b'))).toBe('api-key:a/b');
  });

  it('keeps API-key and JWT principals apart, even with the same tenant and name', () => {
    expect(ownerKey(p('acme', 'alice', 'jwt'))).not.toBe(ownerKey(p('acme', 'alice', 'api-key')));
  });

  it("is 'anonymous' for the anonymous caller, and no authenticated principal can get that key", () => {
    expect(ownerKey(ANONYMOUS)).toBe('anonymous');
    expect(ANONYMOUS).toEqual({ id: 'anonymous', tenant: '', via: 'anonymous' });
    expect(ownerKey(p('', 'anonymous'))).not.toBe('anonymous');
    expect(ownerKey(p('anonymous', ''))).not.toBe('anonymous');
  });
});
