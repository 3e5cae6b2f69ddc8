import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'spec-tests/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Black-box tests start real server processes; two cores, so keep parallelism modest.
    maxWorkers: 2,
  },
});
