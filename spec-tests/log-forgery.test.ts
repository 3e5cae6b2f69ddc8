import { describe, expect, it } from 'vitest';
import { launch, userMessage } from './harness.js';

// What an attacker would like the log to show: an audit record nobody made.
const FORGED = '{"level":30,"audit":"cancel","principal":"alice","tenant":"acme","msg":"forged-by-test"}';

describe('the log', () => {
  it('a request path holding a newline and a JSON record cannot forge a log line (SDK tenant warning)', async () => {
    const agent = await launch({ apiKeys: { alice: 'acme' } });
    let stderr = '';
    agent.proc.stderr?.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const closed = new Promise((resolve) => agent.proc.once('close', resolve));
    const tenant = encodeURIComponent(`acme\n${FORGED}\n`);
    const headers = { ...agent.credentials, 'Content-Type': 'application/json', 'A2A-Version': '1.0' };
    // The SDK's REST router warns with console.warn, verbatim, when the path's tenant differs from
    // the body's or the query's.
    await fetch(`${agent.url}/rest/${tenant}/message:send`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ tenant: 'other', message: userMessage('hi') }),
    });
    await fetch(`${agent.url}/rest/acme/message:send?tenant=${tenant}`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ message: userMessage('hi') }),
    });
    // Stopped and its pipes closed: every line it wrote has been read.
    await agent.stop();
    await closed;

    expect(agent.logs.filter((l) => 'raw' in l)).toEqual([]);
    expect(agent.logs.filter((l) => l.audit === 'cancel')).toEqual([]);
    const carrying = agent.logs.filter((l) => JSON.stringify(l).includes('forged-by-test'));
    expect(carrying.length).toBeGreaterThan(0);
    for (const record of carrying) {
      // Inside a string field, escaped: never a record of its own.
      expect(record).toMatchObject({ source: 'console', level: 40 });
      expect(String(record.args)).toContain(FORGED);
    }
    expect(stderr).toBe('');
  });
});
