import { describe, expect, it } from 'vitest';
import { BodyRefused, parseJson } from '../../../src/faces/http/body.js';
import { jsonDepthExceeds } from '../../../src/faces/http/json-depth.js';

const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;

describe('the JSON nesting limit (MAX_JSON_DEPTH)', () => {
  it('counts objects and arrays, not brackets inside strings or escaped quotes', () => {
    expect(jsonDepthExceeds('{"a":[1]}', 2)).toBe(false);
    expect(jsonDepthExceeds('{"a":[1]}', 1)).toBe(true);
    expect(jsonDepthExceeds(JSON.stringify({ s: '[[[[[[[[[[{{{{{{{{' }), 1)).toBe(false);
    expect(jsonDepthExceeds(JSON.stringify({ s: 'a\\"[[[[[[[[[[' }), 1)).toBe(false);
    expect(jsonDepthExceeds(JSON.stringify({ s: '\\' }), 1)).toBe(false);
  });

  it('takes exactly the limit and refuses one level more', () => {
    expect(jsonDepthExceeds(nested(64), 64)).toBe(false);
    expect(jsonDepthExceeds(nested(65), 64)).toBe(true);
    expect(() => parseJson(nested(64), 64)).not.toThrow();
  });

  it('a body nested 5,000 deep (it overflowed the stack when stored and hashed) is refused naming the limit', () => {
    let refused: unknown;
    try {
      parseJson(`{"metadata":${nested(5000)}}`, 64);
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(BodyRefused);
    expect((refused as BodyRefused).problem).toMatchObject({ kind: 'too-deep', status: 400 });
    expect((refused as BodyRefused).message).toContain('MAX_JSON_DEPTH');
  });

  it('text that is not JSON is refused as such', () => {
    expect(() => parseJson('{"a":', 64)).toThrow('The body is not valid JSON');
  });
});
