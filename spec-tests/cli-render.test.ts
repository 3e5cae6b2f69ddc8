import { describe, expect, it } from 'vitest';
import { progressBar, resultPieces } from '../src/cli/render.js';
import { exitCodeOf } from '../src/cli/states.js';

describe('taskhandle client rendering', () => {
  it('the progress bar fills with the percent and fits the terminal (even one that reports 0 columns)', () => {
    const line = progressBar(35, '2100 of 6000 rows', 'TASK_STATE_WORKING', 80);
    expect(line).toMatch(/^\[#######\.{13}\] {2}35% working {2}2100 of 6000 rows\s*$/);
    expect(line).toHaveLength(79);
    expect(progressBar(undefined, '', 'TASK_STATE_SUBMITTED', 0)).toMatch(/^\[\.{20}\] {4}\? submitted/);
  });

  it('a file artifact comes out as its bytes; text and data parts as lines', () => {
    const csv = 'id,name\r\n1,a\r\n';
    const chunks = [csv.slice(0, 5), csv.slice(5)].map((c) => ({ raw: Buffer.from(c).toString('base64') }));
    const bytes = (artifacts: Record<string, unknown>[]) =>
      Buffer.concat(resultPieces(artifacts).filter((p) => Buffer.isBuffer(p))).toString();
    expect(bytes([{ parts: chunks }])).toBe(csv);
    expect(bytes([{ parts: [{ text: 'done' }, { data: { n: 1 } }] }])).toBe('done\n{"n":1}\n');
  });

  it('a large artifact the agent links is a download, other URLs are lines', () => {
    const url = 'http://127.0.0.1:41241/v1/jobs/t/artifacts/a';
    expect(resultPieces([{ parts: [{ url, metadata: { 'taskhandle.bytes': 9 } }, { url }] }])).toEqual([
      { download: url },
      Buffer.from(`${url}\n`),
    ]);
  });

  it('states map onto the documented exit codes', () => {
    expect(exitCodeOf('TASK_STATE_COMPLETED')).toBe(0);
    for (const s of ['TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED'])
      expect(exitCodeOf(s)).toBe(1);
    expect(exitCodeOf('TASK_STATE_INPUT_REQUIRED')).toBe(6);
    expect(exitCodeOf('TASK_STATE_AUTH_REQUIRED')).toBe(6);
    expect(exitCodeOf('TASK_STATE_WORKING')).toBe(8);
  });
});
