import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HANDLE, skillMessage, V1 } from './a2a.js';
import { type Agent, launch, runCli } from './harness.js';
import { moduleFolder, TASKHANDLE, ZOD } from './skill-module.js';

const { dir, write: moduleFile } = moduleFolder('skill-modules');

const REPORT = moduleFile(
  'report.mjs',
  `import { defineSkill, JobError } from '${TASKHANDLE}';
import { z } from '${ZOD}';
export const report = defineSkill({
  id: 'report',
  description: 'Builds the report of a month',
  input: z.object({ month: z.string().regex(/^\\d{4}-\\d{2}$/) }),
  pollIntervalMs: 700,
  ttlMs: 3_600_000,
  onInterrupt: 'fail',
  concurrency: 1,
  retry: { attempts: 2, backoff: { initialMs: 10, maxMs: 10 } },
  async run(ctx) {
    if (ctx.input.month === '1999-01' && ctx.attempt === 1) throw new JobError('archive busy', 'busy', { transient: true });
    await ctx.progress({ percent: 50, message: 'counting' });
    await ctx.artifact({ name: 'report.csv', parts: [{ text: 'month,total\\n' + ctx.input.month + ',3\\n' }], lastChunk: true });
    return { message: 'Report for ' + ctx.input.month + ' (attempt ' + ctx.attempt + ')' };
  },
});
export const helper = () => 'not a skill';
export default [report];
`,
);
const PING = moduleFile(
  'ping.mjs',
  `export default {
  id: 'ping', description: 'Answers pong', input: { type: 'object' }, pollIntervalMs: 500, ttlMs: 60000,
  onInterrupt: 'rerun', async run() { return { message: 'pong' }; },
};
`,
);

describe('skill modules (serve --skills, SKILLS)', () => {
  let agent: Agent;
  beforeAll(async () => {
    agent = await launch({
      env: { SKILLS: `${REPORT},${PING}`, BUILTIN_SKILLS: 'export', EXTENDED_SKILLS: 'ping' },
    });
  });
  afterAll(() => agent.stop());

  it('the startup line lists each skill with the module it came from', () => {
    const line = agent.logs.find((l) => l.msg === 'taskhandle listening');
    expect(line?.skills).toEqual([
      { id: 'export', from: 'built-in' },
      { id: 'report', from: REPORT },
      { id: 'ping', from: PING },
    ]);
    expect(String(line?.summary)).toContain(`report (${REPORT})`);
  });

  it("shows a module's skills on the agent card and as MCP tools, as built-in ones", async () => {
    const card = (await (await fetch(`${agent.url}/.well-known/agent-card.json`)).json()) as {
      skills: { id: string; description: string }[];
    };
    // `ping` is an extended skill: the public card leaves it out, as it would a built-in.
    expect(card.skills.map((s: { id: string }) => s.id)).toEqual(['export', 'report']);
    expect(card.skills[1]).toMatchObject({ id: 'report', description: 'Builds the report of a month' });
    const client = new Client({ name: 'skill-modules-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${agent.url}/mcp`)));
    const { tools } = await client.listTools();
    const report = tools.find((t) => t.name === 'report');
    expect(report?.inputSchema).toMatchObject({ type: 'object', required: ['month'] });
    await client.close();
  });

  it("describes a module's skill in the /v1/jobs OpenAPI document with its input, extended skills left out", async () => {
    const doc = (await (await fetch(`${agent.url}/v1/openapi.json`)).json()) as {
      components: {
        schemas: { NewJob: { oneOf: { properties: { skill: { const: string }; input: unknown } }[] } };
      };
    };
    const jobs = doc.components.schemas.NewJob.oneOf;
    expect(jobs.map((j) => j.properties.skill.const)).toEqual(['export', 'report']);
    expect(jobs[1]?.properties.input).toMatchObject({ type: 'object', required: ['month'] });
  });

  it("runs a module's skill with its own poll interval, validation and retry policy", async () => {
    const refused = await agent.rpc('SendMessage', { message: skillMessage('report', { month: 'May' }) }, V1);
    expect(refused.body.error.code).toBe(-32602);
    expect(refused.body.error.message).toContain('input.month');
    const sent = await agent.rpc(
      'SendMessage',
      { message: skillMessage('report', { month: '1999-01' }) },
      V1,
    );
    const task = sent.body.result.task;
    expect(task.metadata[HANDLE]).toMatchObject({ pollIntervalMs: 700, ttlMs: 3_600_000 });
    const done = await agent.waitForState(task.id, 'TASK_STATE_COMPLETED');
    expect(done.status.message.parts[0].text).toBe('Report for 1999-01 (attempt 2)');
    expect(done.artifacts[0].parts[0].text).toBe('month,total\n1999-01,3\n');
  });

  it('serve --skills serves the modules it names, instead of SKILLS', async () => {
    const { code, stderr } = await runCli(['serve', '--skills', './nowhere.mjs'], { SKILLS: PING });
    expect(code).toBe(78);
    expect(stderr).toContain('SKILLS: ./nowhere.mjs: no such file');
  });
});

/** Each way a skill module can be wrong stops the start (exit 78) with words naming it. */
describe('skill modules that cannot be served stop the start', () => {
  const refusal = async (env: Record<string, string>) => {
    const { code, stderr } = await runCli(['serve'], env);
    expect(code).toBe(78);
    return stderr;
  };

  it('a missing file, naming where it was looked for', async () => {
    const stderr = await refusal({ SKILLS: join(dir, 'missing.mjs') });
    expect(stderr).toContain(`SKILLS: ${join(dir, 'missing.mjs')}: no such file`);
  });

  it('a module that is not valid JavaScript', async () => {
    const file = moduleFile('broken.mjs', 'export default {\n');
    expect(await refusal({ SKILLS: file })).toContain(`SKILLS: ${file}: is not valid JavaScript`);
  });

  it('a module that throws while loading, with its message', async () => {
    const file = moduleFile('throws.mjs', "throw new Error('no DATABASE for reports');\n");
    const stderr = await refusal({ SKILLS: file });
    expect(stderr).toContain(`SKILLS: ${file}: threw while loading (Error: no DATABASE for reports)`);
  });

  it('a module that imports a package that is not installed', async () => {
    const file = moduleFile('needs.mjs', "import 'left-pad-that-is-not-here';\nexport default [];\n");
    expect(await refusal({ SKILLS: file })).toContain('it imports something that cannot be found');
  });

  it('a module that exports no skill, listing its exports', async () => {
    const file = moduleFile('empty.mjs', 'export const answer = 42;\nexport function helper() {}\n');
    const stderr = await refusal({ SKILLS: file });
    expect(stderr).toContain(`SKILLS: ${file} exports no skill (its exports: answer, helper)`);
    expect(stderr).toContain('defineSkill');
  });

  it('an export that is meant as a skill but lacks a field, naming the export and the field', async () => {
    const file = moduleFile(
      'incomplete.mjs',
      "export const slow = { id: 'slow', description: 'Slow', input: {}, pollIntervalMs: 1000, onInterrupt: 'rerun', run: async () => undefined };\n",
    );
    expect(await refusal({ SKILLS: file })).toContain(
      `SKILLS: ${file}, export "slow": not a valid skill: ttlMs is required`,
    );
  });

  it('a skill that is both remote and run here, naming the field', async () => {
    const file = moduleFile(
      'both.mjs',
      "export const both = { id: 'both', description: 'Both', input: {}, pollIntervalMs: 1000, ttlMs: 1000, onInterrupt: 'rerun', remote: true, run: async () => undefined };\n",
    );
    expect(await refusal({ SKILLS: file })).toContain(
      `SKILLS: ${file}, export "both": not a valid skill: run must be absent from a remote skill`,
    );
  });

  it('an id defined twice: against a built-in, and across two modules', async () => {
    const clash = moduleFile(
      'clash.mjs',
      "export default { id: 'export', description: 'Mine', input: {}, pollIntervalMs: 1000, ttlMs: 60000, onInterrupt: 'rerun', run: async () => undefined };\n",
    );
    const builtin = await refusal({ SKILLS: clash });
    expect(builtin).toContain(
      `skill "export" is defined twice: by the built-in skills and by ${clash} (export "default")`,
    );
    expect(builtin).toContain('BUILTIN_SKILLS');
    // Without the built-in, the module serves its own `export`; a second module's `ping` clashes.
    const again = moduleFile('ping-again.mjs', `export { default } from '${pathToFileURL(PING).href}';\n`);
    const other = moduleFile(
      'ping-other.mjs',
      "export const ping = { id: 'ping', description: 'Another', input: {}, pollIntervalMs: 1000, ttlMs: 60000, onInterrupt: 'rerun', run: async () => undefined };\n",
    );
    // The same skill object reached through two modules is one skill, not a clash.
    const same = await launch({ env: { SKILLS: `${PING},${again}` } });
    const line = same.logs.find((l) => l.msg === 'taskhandle listening');
    await same.stop();
    expect(((line?.skills ?? []) as { id: string }[]).filter((s) => s.id === 'ping')).toEqual([
      { id: 'ping', from: PING },
    ]);
    const across = await refusal({ SKILLS: `${PING},${other}` });
    expect(across).toContain(
      `skill "ping" is defined twice: by ${PING} (export "default") and by ${other} (export "ping")`,
    );
  });

  it('BUILTIN_SKILLS naming no built-in', async () => {
    expect(await refusal({ BUILTIN_SKILLS: 'exprt' })).toContain(
      'BUILTIN_SKILLS=exprt: no built-in skill "exprt" (did you mean "export"?); the built-ins are export, sleep, approval, batch',
    );
  });
});
