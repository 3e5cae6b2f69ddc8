import { randomBytes } from 'node:crypto';
import type { Request } from 'express';

/**
 * What a client declared that this face acts on: whether it takes form-mode `elicitation/create`
 * requests. Both parties "MUST only use capabilities that were successfully negotiated"
 * (2025-11-25, lifecycle), and servers "MUST NOT send elicitation requests with modes that are not
 * supported by the client" (elicitation): this face sends form mode only, so a client that declared
 * only `url` gets none either.
 */
export interface ClientDeclared {
  formElicitation: boolean;
}

export const NOTHING_DECLARED: ClientDeclared = { formElicitation: false };

/** `Mcp-Session-Id`, as Streamable HTTP names it. */
export const SESSION_HEADER = 'Mcp-Session-Id';

/**
 * Whether client capabilities (`initialize`'s, or 2026-07-28's per-request ones) declare form-mode
 * elicitation: `elicitation.form`, or `elicitation: {}`, which "is equivalent to declaring support
 * for form mode only" (2025-11-25, for backwards compatibility).
 */
export function declaresFormElicitation(capabilities: unknown): boolean {
  const elicitation = (capabilities as { elicitation?: unknown } | undefined)?.elicitation;
  if (typeof elicitation !== 'object' || elicitation === null || Array.isArray(elicitation)) return false;
  return 'form' in elicitation || !('url' in elicitation);
}

/** Revisions that define elicitation: it came with 2025-06-18 (2025-03-26 has none to negotiate). */
const ELICITING_VERSIONS = new Set(['2025-11-25', '2025-06-18']);

/**
 * The session id an `initialize` answer carries: what the client declared there (the flags), and
 * 128 random bits. No server-side session stands behind it (nothing is kept between requests): the
 * id itself is what was negotiated, so any instance reads it from the header the client "MUST
 * include ... on all of their subsequent HTTP requests" (2025-11-25, transports). It grants
 * nothing: every request is authenticated on its own, and an answer is taken only from the task's
 * owner or approvers, whatever the session.
 */
export function sessionIdFor(capabilities: unknown, negotiatedVersion: string): string {
  const form = ELICITING_VERSIONS.has(negotiatedVersion) && declaresFormElicitation(capabilities);
  return `th1.${form ? 'f' : '-'}.${randomBytes(16).toString('base64url')}`;
}

const SESSION_ID = /^th1\.([a-z-]{1,16})\.[A-Za-z0-9_-]{22}$/;

/**
 * What a handshake-revision request's client declared at `initialize`, read from its session id.
 * No id, or one not of this server's making: nothing declared, so nothing is sent that the client
 * might not take (a client that lost its id re-initializes to get one).
 */
export function declaredBySession(req: Request): ClientDeclared {
  const match = SESSION_ID.exec(req.get(SESSION_HEADER) ?? '');
  return { formElicitation: match?.[1]?.includes('f') ?? false };
}
