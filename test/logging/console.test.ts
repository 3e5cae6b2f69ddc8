import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { routeConsoleToLogger } from '../../src/logging/console.js';

const METHODS = ['log', 'info', 'debug', 'warn', 'error', 'trace', 'dir', 'table'] as const;

describe('routeConsoleToLogger', () => {
  let lines: string[];
  let saved: Pick<Console, (typeof METHODS)[number]>;
  let warningListeners: NodeJS.WarningListener[];

  beforeEach(() => {
    lines = [];
    saved = Object.fromEntries(METHODS.map((m) => [m, console[m]])) as typeof saved;
    warningListeners = process.listeners('warning');
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString().split('\n').filter(Boolean));
        done();
      },
    });
    routeConsoleToLogger(pino({ level: 'debug' }, sink));
  });
  afterEach(() => {
    Object.assign(console, saved);
    process.removeAllListeners('warning');
    for (const l of warningListeners) process.on('warning', l);
  });

  const records = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);

  it('a dependency that writes a newline and a JSON record makes one record with the text as a field', () => {
    const forged = '{"level":30,"audit":"cancel","msg":"forged"}';
    console.warn(`Tenant mismatch: URL path tenant "acme\n${forged}" differs`);
    expect(lines).toHaveLength(1);
    expect(records()[0]).toMatchObject({ level: 40, source: 'console' });
    expect(records()[0]?.args).toBe(`Tenant mismatch: URL path tenant "acme\n${forged}" differs`);
  });

  it('each console method logs at its level, formatting its arguments', () => {
    console.log('n=%d', 3);
    console.info('info', { a: 1 });
    console.debug('debug');
    console.error('error', new Error('boom'));
    console.dir({ deep: true });
    expect(records().map((r) => r.level)).toEqual([30, 30, 20, 50, 30]);
    expect(records()[0]?.args).toBe('n=3');
    expect(records()[1]?.args).toBe('info { a: 1 }');
    expect(String(records()[3]?.args)).toContain('Error: boom');
  });

  it('a very long message is cut, saying how much was left out', () => {
    console.warn('x'.repeat(10_000));
    expect(String(records()[0]?.args)).toMatch(/^x{8192}\.\.\. \(1808 more characters\)$/);
  });

  it('process warnings become records instead of raw text on stderr', async () => {
    const emitted = new Promise((resolve) => process.once('warning', resolve));
    process.emitWarning('something odd\n{"audit":"cancel"}', { code: 'TH_TEST' });
    await emitted;
    expect(records()).toEqual([
      expect.objectContaining({
        level: 40,
        source: 'process',
        warning: { name: 'Warning', code: 'TH_TEST', message: 'something odd\n{"audit":"cancel"}' },
      }),
    ]);
  });

  it("a warning's detail is kept; its stack only under --trace-warnings, as Node's printout", async () => {
    const traced = process as { traceProcessWarnings?: boolean };
    const before = traced.traceProcessWarnings;
    try {
      for (const trace of [false, true]) {
        traced.traceProcessWarnings = trace;
        const emitted = new Promise((resolve) => process.once('warning', resolve));
        process.emitWarning('odd', { code: 'TH_DETAIL', detail: 'more about it' });
        await emitted;
      }
    } finally {
      traced.traceProcessWarnings = before;
    }
    const [plain, withStack] = records().map((r) => r.warning as Record<string, unknown>);
    expect(plain).toEqual({ name: 'Warning', code: 'TH_DETAIL', message: 'odd', detail: 'more about it' });
    expect(withStack).toMatchObject({ code: 'TH_DETAIL', detail: 'more about it' });
    expect(String(withStack?.stack)).toMatch(/^Warning: odd\n\s+at /);
  });
});
