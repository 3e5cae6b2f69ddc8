const OPEN_OBJECT = 0x7b; // {
const OPEN_ARRAY = 0x5b; // [
const CLOSE_OBJECT = 0x7d; // }
const CLOSE_ARRAY = 0x5d; // ]
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \

/**
 * True when JSON text nests objects and arrays deeper than `maxDepth`. One pass over the text with
 * no allocation, counting brackets outside strings and jumping over each string with `indexOf`
 * (most of a body is strings): cheaper than the parse that follows, on every request of the hot
 * path, and it stops at the first level too deep. Text that is not JSON may give any answer; the
 * parse that follows refuses it.
 * @example jsonDepthExceeds('{"a":[1]}', 1) // true: the array is at depth 2
 */
export function jsonDepthExceeds(text: string, maxDepth: number): boolean {
  // Every level takes at least one character: short text cannot be too deep.
  if (text.length <= maxDepth) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = closingQuote(text, i);
      if (i < 0) return false;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > maxDepth) return true;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) depth--;
  }
  return false;
}

/** The index of the quote that closes the string opened at `open` (-1: none). */
function closingQuote(text: string, open: number): number {
  let at = text.indexOf('"', open + 1);
  while (at > 0) {
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
    at = text.indexOf('"', at + 1);
  }
  return -1;
}
