import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { promptFile, realColony, type RealColony } from '../helpers/real-cli.js';
import { teamScript } from '../helpers/team-script.js';

/**
 * The real OpenCode binary (opencode-ai, pinned) as Colony's agents, confined, against the scripted model
 * endpoint (Anthropic Messages) named by the owner's ANTHROPIC_BASE_URL secret: a whole goal with each run's
 * tokens and OpenCode's own cost (from its bundled price list); then a refused key, a failed run with one DM.
 */
const KEY = { ANTHROPIC_API_KEY: () => 'sk-ant-scripted', ANTHROPIC_BASE_URL: (url: string) => url };
const MODEL = 'anthropic/claude-sonnet-4-5';

function agent(c: RealColony, name: string, tools: readonly string[]): void {
  const prompt = promptFile(c.dir);
  c.ok(['agents', 'create', name, '--model', MODEL, '--prompt-file', prompt, '--tools', tools.join(',')]);
}

describe('OpenCode as a runtime', () => {
  it('runs a whole goal: proposal, approval, claim, completion, usage with cost', async (t) => {
    const c = await realColony('colony-opencode-goal-', teamScript('writer'), KEY);
    t.after(() => c.close());
    // The team's runtime: the default coordinator runs on it too, with OpenCode's default model.
    c.ok(['config', 'set', 'agent-runtime', 'opencode']);
    agent(c, 'writer', ['read_inbox', 'claim_task', 'complete_task']);
    await c.serve();
    c.ok(['goals', 'create', '--title', 'Write the notes', '--description', 'One line per change.']);
    await c.until('the proposal', () => (JSON.parse(c.ok(['proposals', 'list', '--json'])) as unknown[]).length > 0);
    c.ok(['approve', '1']);
    // Done only with evidence (on for new goals): the owner's verdict on the hand-in completes the goal.
    await c.until('the hand-in', () => /#2 \[awaiting_verification\]/.test(c.ok(['goals', 'show', '1'])), 180_000);
    c.ok(['tasks', 'verify', '2', '--approve']);
    await c.until(
      'the goal completed',
      () => /completed/.test(c.ok(['goals', 'show', '1']).split('\n')[0] ?? ''),
      240_000,
    );
    const runs = (await c.settled()).filter((r) => r.status !== 'refused');
    assert.ok(runs.length >= 4, JSON.stringify(runs));
    for (const r of runs) {
      assert.equal(r.status, 'succeeded', JSON.stringify(r));
      assert.deepEqual([r.runtime, r.billing_lane, r.cost_known], ['opencode', 'api', true], JSON.stringify(r));
      assert.ok(r.tokens_in >= 1200 && r.tokens_out >= 300 && r.cost_cents >= 1, JSON.stringify(r));
    }
    const show = c.ok(['runs', 'show', String(runs[runs.length - 1]!.run_id)]);
    assert.match(show, /colony\.get_goal \{"goal_id":1\} → ok/);
    assert.doesNotMatch(show, /"type":"step_finish"/);
  });

  it('a refused key fails the run with the reason and one DM', async (t) => {
    const c = await realColony(
      'colony-opencode-fail-',
      // The key is refused from the first run (that it works is the whole goal's test).
      () => ({ error: { status: 401, message: 'invalid x-api-key' } }),
      KEY,
    );
    t.after(() => c.close());
    c.ok(['config', 'set', 'agent-runtime', 'opencode']);
    agent(c, 'lister', ['read_inbox']);
    await c.serve();
    for (const n of [1, 2]) {
      c.ok(['agents', 'wake', 'lister']);
      const r = await c.ended(n);
      assert.deepEqual([r.status, r.cause], ['failed', 'auth'], JSON.stringify(r));
      assert.match(r.reason ?? '', /OpenCode's credentials were refused: .*colony secrets set/);
    }
    const dms = c.dms();
    assert.equal(dms.length, 1, dms.join('\n---\n'));
  });
});
