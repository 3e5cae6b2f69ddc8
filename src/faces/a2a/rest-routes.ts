import type { Request } from 'express';
import type { REST_BODIES } from './params.js';
import { requestedVersion } from './version.js';

/** The routes of the SDK's v0.3 REST router (`:id` stands for one path segment), and our tasks/list. */
const LEGACY_ROUTES: [methods: string[], path: RegExp][] = [
  [['GET', 'HEAD'], /^\/v1\/card\/?$/],
  [['POST'], /^\/v1\/message:(send|stream)\/?$/],
  [['POST'], /^\/v1\/tasks\/[^/]+:cancel\/?$/],
  [['GET', 'HEAD', 'POST'], /^\/v1\/tasks\/[^/]+:subscribe\/?$/],
  [['GET', 'HEAD'], /^\/v1\/tasks\/?$/],
  [['GET', 'HEAD'], /^\/v1\/tasks\/[^/]+\/?$/],
  [['GET', 'HEAD', 'POST'], /^\/v1\/tasks\/[^/]+\/pushNotificationConfigs\/?$/],
  [['GET', 'HEAD', 'DELETE'], /^\/v1\/tasks\/[^/]+\/pushNotificationConfigs\/[^/]+\/?$/],
];

export const isLegacyRoute = (method: string, path: string): boolean =>
  LEGACY_ROUTES.some(([methods, re]) => methods.includes(method) && re.test(path));

/**
 * Whether the SDK serves this request with its v0.3 REST router: a path under /v1/ asked without
 * a version or as v0.3 (asked as v1.0, `/v1/...` is a v1.0 path whose tenant is "v1"). A version we
 * do not speak is answered in the shape the path implies.
 */
export function isLegacy(req: Request): boolean {
  if (!req.path.startsWith('/v1/')) return false;
  const asked = requestedVersion(req);
  return !asked.ok || asked.version === '0.3';
}

/** The non-streaming send of either version (v1.0's under a tenant too). */
export const SEND = /^(\/[^/]+)?\/message:send\/?$/;

/**
 * The routes whose bodies the SDK decodes, by version: their fields' types are checked first (see
 * params.ts). v1.0 routes may come under a tenant (`/{tenant}/message:send`).
 */
export const BODY_ROUTES: Record<'1.0' | '0.3', [RegExp, keyof (typeof REST_BODIES)['1.0']][]> = {
  '1.0': [
    [/^(\/[^/]+)?\/message:(send|stream)\/?$/, 'send'],
    [/^(\/[^/]+)?\/tasks\/[^/]+\/pushNotificationConfigs\/?$/, 'pushConfig'],
  ],
  '0.3': [
    [/^\/v1\/message:(send|stream)\/?$/, 'send'],
    [/^\/v1\/tasks\/[^/]+\/pushNotificationConfigs\/?$/, 'pushConfig'],
  ],
};

/**
 * The method a REST route serves, of those that take the generations extension's fields (the
 * JSON-RPC method name stands for it; '' for the rest). v1.0 routes may come under a tenant, v0.3's
 * under /v1.
 */
export function restMethodOf(method: string, path: string): string {
  if (method === 'GET' && /^(\/[^/]+)?\/tasks\/[^/:]+\/?$/.test(path)) return 'GetTask';
  if (method !== 'POST') return '';
  if (/^(\/[^/]+)?\/tasks\/[^/]+:cancel\/?$/.test(path)) return 'CancelTask';
  if (/^(\/[^/]+)?\/message:(send|stream)\/?$/.test(path)) return 'SendMessage';
  return '';
}
