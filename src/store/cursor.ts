import { InvalidPageToken } from '../engine/store-port.js';

/** ListTasks page cursor: the (updatedAt, id) of the last task of the previous page, opaque to callers. */
export const encodeCursor = (at: number, id: string): string =>
  Buffer.from(`${at}:${id}`).toString('base64url');

export function decodeCursor(token: string): { at: number; id: string } {
  const text = Buffer.from(token, 'base64url').toString();
  const colon = text.indexOf(':');
  const at = Number(text.slice(0, colon));
  if (colon <= 0 || !Number.isSafeInteger(at)) throw new InvalidPageToken('pageToken is not valid');
  return { at, id: text.slice(colon + 1) };
}
