import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { approverNameOf, type Principal } from '../../src/auth/principal.js';
import {
  approverName,
  grantOf,
  MAX_APPROVER_NAME,
  MAX_APPROVERS,
  normalizeApproverName,
  normalizeApprovers,
  type PrincipalKind,
  receiptOf,
} from '../../src/engine/grant.js';
import type { TaskState } from '../../src/engine/task.js';
import { Approval } from '../../src/skills/decision.js';

const BOB = { owner: 'api-key:globex/bob', approverName: 'globex/bob' };
const record = (state: TaskState, approvers?: string[]) => ({
  owner: 'api-key:acme/alice',
  state,
  approvers,
});

describe('grantOf: who may do what to a task', () => {
  it('gives the owner the task in every state', () => {
    for (const state of ['submitted', 'working', 'input-required', 'completed'] as const) {
      expect(grantOf(record(state), { owner: 'api-key:acme/alice' })).toBe('owner');
    }
  });

  it('gives a named approver the answer while the task waits, and nothing before or after', () => {
    expect(grantOf(record('input-required', ['globex/bob']), BOB)).toBe('approver');
    expect(grantOf(record('auth-required', ['globex/bob']), BOB)).toBe('approver');
    for (const state of ['submitted', 'working', 'completed', 'failed', 'canceled', 'rejected'] as const) {
      expect(grantOf(record(state, ['globex/bob']), BOB), state).toBeUndefined();
    }
  });

  it('gives nobody else anything: other names, the same name of another kind, no name', () => {
    const waiting = record('input-required', ['globex/bob']);
    expect(grantOf(waiting, { owner: 'api-key:globex/carol', approverName: 'globex/carol' })).toBeUndefined();
    expect(grantOf(waiting, { owner: 'jwt:globex/bob', approverName: 'jwt:globex/bob' })).toBeUndefined();
    expect(grantOf(waiting, { owner: 'anonymous' })).toBeUndefined();
    expect(grantOf(record('input-required'), BOB)).toBeUndefined();
  });
});

describe('receiptOf: all an approver learns from answering', () => {
  it('holds the id, the state after, the prompt’s text without the owner’s context, and who answered', () => {
    const waiting = {
      id: 't1',
      statusMessage: {
        messageId: 'm1',
        role: 'ROLE_AGENT' as const,
        contextId: 'the-owners-context',
        taskId: 't1',
        metadata: { owner: 'only' },
        parts: [{ text: 'Approve?' }, { data: { secret: 1 } }],
      },
    };
    const receipt = receiptOf(waiting, { state: 'submitted', updatedAt: 5 }, 'globex/bob');
    expect(receipt).toEqual({
      taskId: 't1',
      state: 'submitted',
      at: 5,
      prompt: { messageId: 'm1', role: 'ROLE_AGENT', parts: [{ text: 'Approve?' }], taskId: 't1' },
      answeredBy: 'globex/bob',
    });
  });
});

describe('approver names say how the principal authenticated', () => {
  const p = (via: Principal['via'], tenant: string, id: string): Principal => ({ via, tenant, id });

  it('API-key principals keep "tenant/principal"; JWT principals are "jwt:tenant/principal"', () => {
    expect(approverNameOf(p('api-key', 'globex', 'bob'))).toBe('globex/bob');
    expect(approverNameOf(p('jwt', 'globex', 'bob'))).toBe('jwt:globex/bob');
    expect(approverNameOf(p('anonymous', '', 'anonymous'))).toBeUndefined();
    expect(approverNameOf(p('jwt', 'globex', 'bob@globex.example'))).toBe('jwt:globex/bob@globex.example');
  });

  it('accepts "key:tenant/principal" as the API-key form, and refuses everything malformed', () => {
    expect(normalizeApproverName('key:globex/bob')).toBe('globex/bob');
    expect(normalizeApproverName('globex/bob')).toBe('globex/bob');
    expect(normalizeApproverName('jwt:globex/bob')).toBe('jwt:globex/bob');
    for (const bad of [
      '',
      'bob',
      'globex/',
      '/bob',
      'globex bob',
      'a/b/c',
      'oidc:globex/bob',
      'jwt:bob',
      'a%2f/b',
    ]) {
      expect(normalizeApproverName(bad), bad).toBeUndefined();
    }
  });

  it('names the field and both forms when a skill is given a malformed one', () => {
    const parsed = Approval.safeParse({ approver: 'globex bob' });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.path).toEqual(['approver']);
    expect(parsed.error?.issues[0]?.message).toMatch(/"tenant\/principal".*"jwt:tenant\/principal"/);
    expect(Approval.parse({ approver: 'key:globex/bob' }).approver).toBe('globex/bob');
  });

  it('gives every principal a valid name of its own (no two principals share one)', () => {
    const decode = (name: string): [PrincipalKind, string, string] => {
      const jwt = name.startsWith('jwt:');
      const [tenant = '', id = ''] = (jwt ? name.slice(4) : name).split('/');
      return [jwt ? 'jwt' : 'api-key', decodeURIComponent(tenant), decodeURIComponent(id)];
    };
    fc.assert(
      fc.property(
        fc.constantFrom<PrincipalKind>('api-key', 'jwt'),
        fc.string({ minLength: 1, unit: 'grapheme' }),
        fc.string({ minLength: 1, unit: 'grapheme' }),
        (kind, tenant, id) => {
          const name = approverName(kind, tenant, id);
          expect(normalizeApproverName(name)).toBe(name);
          expect(decode(name)).toEqual([kind, tenant, id]);
        },
      ),
      { seed: 13, numRuns: 2000 },
    );
  });
});

describe("a question's approvers are bounded", () => {
  it(`refuses more than ${MAX_APPROVERS} names, or a name longer than ${MAX_APPROVER_NAME} characters, saying which`, () => {
    const many = Array.from({ length: MAX_APPROVERS + 1 }, (_, i) => `acme/p${i}`);
    expect(normalizeApprovers(many)).toEqual({
      problem: `approvers names ${MAX_APPROVERS + 1} approvers, more than the ${MAX_APPROVERS} a question may have`,
    });
    expect(normalizeApprovers(many.slice(1))).toMatchObject({ names: many.slice(1) });
    const long = `acme/${'p'.repeat(MAX_APPROVER_NAME)}`;
    expect(normalizeApprovers(['acme/ok', long])).toEqual({
      problem: `approvers[1] is ${long.length} characters long, more than the ${MAX_APPROVER_NAME} a name may be`,
    });
  });
});
