import { createRequire } from 'node:module';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { routeGrpcToLogger } from '../../src/logging/grpc.js';

const require = createRequire(import.meta.url);
// The logging module that grpc-js's own index requires (and its Server and channels log through).
const grpcLogging = createRequire(require.resolve('@grpc/grpc-js'))('./logging') as {
  getLogger(): Partial<Console>;
  setLogger(logger: Partial<Console>): void;
  setLoggerVerbosity(verbosity: number): void;
  log(severity: number, ...args: unknown[]): void;
};
const { logVerbosity } = require('@grpc/grpc-js') as typeof import('@grpc/grpc-js');

describe('routeGrpcToLogger', () => {
  const saved = grpcLogging.getLogger();
  afterEach(() => {
    grpcLogging.setLogger(saved);
    grpcLogging.setLoggerVerbosity(logVerbosity.ERROR);
  });

  it("grpc-js's messages become records at their own level, in the instance its index uses", () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString().split('\n').filter(Boolean));
        done();
      },
    });
    routeGrpcToLogger(pino({ level: 'debug' }, sink));
    grpcLogging.setLoggerVerbosity(logVerbosity.DEBUG);
    grpcLogging.log(logVerbosity.ERROR, 'No address added out of total %d resolved', 1);
    grpcLogging.log(logVerbosity.INFO, 'info\n{"audit":"cancel"}');
    grpcLogging.log(logVerbosity.DEBUG, 'server | (1) Server constructed');
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({
        level: 50,
        source: 'grpc',
        args: 'No address added out of total 1 resolved',
        msg: 'grpc-js logged',
      }),
      expect.objectContaining({ level: 30, source: 'grpc', args: 'info\n{"audit":"cancel"}' }),
      expect.objectContaining({ level: 20, source: 'grpc', args: 'server | (1) Server constructed' }),
    ]);
  });
});
