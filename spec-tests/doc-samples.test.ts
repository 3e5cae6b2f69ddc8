import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { samplePages, sampleProblems, sampleSource } from './doc-samples.js';
import { assertBuilt, ROOT, run } from './package-project.js';

/**
 * Every JavaScript and TypeScript sample of the README and docs/ is a file under examples/ (or a
 * region of one), shown byte for byte, and every example type-checks as a user's strict TypeScript
 * would check it. The samples that run are run by doc-samples-*.test.ts and readme.test.ts.
 */

describe('the code samples of the README and docs/', () => {
  it.each(samplePages())('%s: every sample is its marked file or region, as it is', (page) => {
    expect(sampleProblems(page)).toEqual([]);
  });

  it('a region is the lines between its markers, less the indentation they share', () => {
    expect(sampleSource('examples/docs/publish.mjs#transient')).toBe(
      "throw new JobError('the registry answered 503', 'upstream', { transient: true });\n",
    );
  });

  it('a marker naming no file, or no region of it, says what to do', () => {
    expect(() => sampleSource('examples/docs/nothing.mjs')).toThrow(
      /no file examples\/docs\/nothing\.mjs: write it/,
    );
    expect(() => sampleSource('examples/docs/publish.mjs#nothing')).toThrow(
      'examples/docs/publish.mjs has no region nothing: mark it with // #region nothing and // #endregion nothing',
    );
  });
});

describe('the examples', () => {
  it('type-check under strict tsc with checkJs, against the built declarations', async () => {
    assertBuilt();
    const examples = join(ROOT, 'examples');
    await run(join(ROOT, 'node_modules/.bin/tsc'), ['-p', join(examples, 'tsconfig.json')], {
      cwd: examples,
    });
  }, 120_000);
});
