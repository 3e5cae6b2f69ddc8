import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rpcStream, skillMessage, V1 } from './a2a.js';
import { type Agent, launch } from './harness.js';

/**
 * A2A section 3.7: "Results SHOULD be returned using Artifacts". A streaming client that reads only
 * artifacts (a2a-ai-provider's streamText, Mastra's stream) sees every built-in skill's outcome.
 */
describe("each skill's outcome is an artifact on the stream", () => {
  let agent: Agent;
  beforeAll(async () => {
    agent = await launch();
  });
  afterAll(async () => {
    await agent?.stop();
  });

  /** The stream of a streaming send, to its end: its artifact updates' names and texts, and its last state. */
  async function streamed(skill: string, input: Record<string, unknown>) {
    const stream = await rpcStream(
      agent,
      'SendStreamingMessage',
      { message: skillMessage(skill, input) },
      V1,
    );
    const results = (await stream.rest()).map((e) => e.data.result);
    const artifacts = results.flatMap((r) => (r.artifactUpdate ? [r.artifactUpdate.artifact] : []));
    const last = results.at(-1);
    return { artifacts, state: last?.statusUpdate?.status.state ?? last?.task?.status.state };
  }

  it('sleep: its reply, as the artifact "reply", before the completed status', async () => {
    const { artifacts, state } = await streamed('sleep', { seconds: 0 });
    expect(state).toBe('TASK_STATE_COMPLETED');
    expect(artifacts).toEqual([expect.objectContaining({ name: 'reply', parts: [{ text: 'Slept 0 s' }] })]);
  });

  it('export: its file, and no reply artifact beside it (its message is a summary of the file)', async () => {
    const { artifacts, state } = await streamed('export', { rows: 2 });
    expect(state).toBe('TASK_STATE_COMPLETED');
    expect(artifacts.length).toBeGreaterThan(0);
    expect(artifacts.map((a) => a.name)).not.toContain('reply');
  });
});
