/** What a request's `Prefer` header (RFC 7240) asks for, of what /v1/jobs honours. */
export interface Preferences {
  respondAsync: boolean;
  /** Seconds to wait, capped at {@link MAX_WAIT_S}; undefined when not asked. */
  waitS?: number;
  /** `return=see-other`... not used: 303 is asked with `?follow=result` (see docs/http-jobs.md). */
}

/** The longest `Prefer: wait=N` honoured: longer waits are cut to this. */
export const MAX_WAIT_S = 60;

/**
 * Parses `Prefer` (one header or several, comma-separated preferences, parameters after `;`
 * ignored). Unknown preferences are ignored, as RFC 7240 asks.
 * @example parsePrefer('respond-async, wait=10') // { respondAsync: true, waitS: 10 }
 */
export function parsePrefer(header: string | string[] | undefined): Preferences {
  const values = Array.isArray(header) ? header : header ? [header] : [];
  const out: Preferences = { respondAsync: false };
  for (const pref of values.flatMap((v) => v.split(','))) {
    const [token = ''] = pref.split(';');
    const [name = '', raw] = token.split('=').map((s) => s.trim().replace(/^"|"$/g, ''));
    const key = name.toLowerCase();
    if (key === 'respond-async') out.respondAsync = true;
    else if (key === 'wait' && raw !== undefined && /^\d+$/.test(raw)) {
      out.waitS = Math.min(MAX_WAIT_S, Number(raw));
    }
  }
  return out;
}
