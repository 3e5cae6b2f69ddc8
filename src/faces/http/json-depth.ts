const OPEN_OBJECT = 0x7b; // {
const OPEN_ARRAY = 0x5b; // [
const CLOSE_OBJECT = 0x7d; // }
const CLOSE_ARRAY = 0x5d; // ]
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \

/**
 * True when JSON text nests objects and arrays deeper than `maxDepth`. One pass over the text,
 * counting brackets outside strings, with no allocation: cheap enough for every request on the hot
 * path, and it stops at the first level too deep. Text that is not JSON may give any answer; the
 * parse that follows refuses it.
 * @example jsonDepthExceeds('{"a":[1]}', 1) // true: the array is at depth 2
 */
export function jsonDepthExceeds(text: string, maxDepth: number): boolean {
  // Every level takes at least one character: short text cannot be too deep.
  if (text.length <= maxDepth) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > maxDepth) return true;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) depth--;
  }
  return false;
}
