import { Writable } from 'node:stream';
import { pino } from 'pino';
import { beforeEach, describe, expect, it } from 'vitest';
import { type RawOutput, routeStreamsToLogger } from '../../src/logging/streams.js';

/** A stream that keeps what reaches it, as the process's stdout or stderr would show it. */
function sink(): { stream: Writable; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return { stream, text: () => text };
}

describe('routeStreamsToLogger', () => {
  let log: ReturnType<typeof sink>;
  let stdout: ReturnType<typeof sink>;
  let stderr: ReturnType<typeof sink>;
  let raw: RawOutput;

  beforeEach(() => {
    log = sink();
    stdout = sink();
    stderr = sink();
    raw = routeStreamsToLogger(pino({ level: 'debug' }, log.stream), {
      stdout: stdout.stream,
      stderr: stderr.stream,
    });
  });

  const records = () =>
    log
      .text()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);

  it('a write to stderr holding a newline and a JSON record is one record, the text a field', () => {
    const forged = '{"level":30,"audit":"cancel","msg":"forged"}';
    stderr.stream.write(`oops\n${forged}\n`);
    expect(records()).toEqual([
      expect.objectContaining({ level: 40, source: 'stderr', text: `oops\n${forged}` }),
    ]);
    expect(stderr.text()).toBe('');
  });

  it('stdout is info; bytes and other encodings are decoded; white space alone makes no record', () => {
    stdout.stream.write(Buffer.from('bytes\r\n'));
    stdout.stream.write('aGk=', 'utf8');
    stdout.stream.write('aGk=', 'base64');
    stdout.stream.write('\n');
    stdout.stream.write(new Uint8Array([0x6f, 0x6b]));
    expect(records().map((r) => [r.level, r.source, r.text])).toEqual([
      [30, 'stdout', 'bytes'],
      [30, 'stdout', 'aGk='],
      [30, 'stdout', 'hi'],
      [30, 'stdout', 'ok'],
    ]);
    expect(stdout.text()).toBe('');
  });

  it('calls the write callback and reports no back-pressure (a pipe into it keeps flowing)', async () => {
    let result: boolean | undefined;
    await new Promise((resolve) => {
      result = stdout.stream.write('with a callback\n', resolve);
    });
    await new Promise((resolve) => stderr.stream.write('and an encoding\n', 'utf8', resolve));
    expect(result).toBe(true);
    expect(records()).toHaveLength(2);
  });

  it('a very long write is cut, saying how much was left out', () => {
    stderr.stream.write('y'.repeat(9_000));
    expect(String(records()[0]?.text)).toMatch(/^y{8192}\.\.\. \(808 more characters\)$/);
  });

  it('the raw writers reach the streams themselves', () => {
    raw.stderr('plain words\n');
    raw.stdout('plain out\n');
    expect(stderr.text()).toBe('plain words\n');
    expect(stdout.text()).toBe('plain out\n');
    expect(records()).toEqual([]);
  });

  it('a logger that writes through the routed stream is passed on, never routed into itself', () => {
    const out = sink();
    const streams = { stdout: out.stream, stderr: sink().stream };
    const through = pino(out.stream);
    routeStreamsToLogger(through, streams);
    out.stream.write('from a skill\n');
    const lines = out.text().split('\n').filter(Boolean);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({ source: 'stdout', text: 'from a skill' });
  });
});
