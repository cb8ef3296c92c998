import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { COORDINATOR_TOOLS } from '../../src/actions/coordinator.js';
import { promptFile, realColony, type RealColony } from '../helpers/real-cli.js';
import { teamScript } from '../helpers/team-script.js';
import { callToolThenFinish } from '../../testkit/model-endpoint/index.js';

/**
 * The real Codex binary (@openai/codex, pinned) as Colony's agents, confined, against the scripted model
 * endpoint (OpenAI Responses) named by the owner's OPENAI_BASE_URL secret: a whole goal, each run's tokens
 * priced from the owner's rate card (Codex reports no cost), the coordinator's later runs resuming its Codex
 * thread; without a rate card the cost is unknown, never 0; a refused key fails the run with one DM.
 * The model is one Codex does not know (`scripted-model`): for its own models Codex defers MCP tools behind
 * OpenAI's hosted tool search, which no offline endpoint serves.
 */
const KEY = { OPENAI_API_KEY: () => 'sk-scripted', OPENAI_BASE_URL: (url: string) => url };
const MODEL = 'scripted-model';

function agent(c: RealColony, name: string, tools: readonly string[]): void {
  const prompt = promptFile(c.dir);
  c.ok([
    'agents',
    'create',
    name,
    '--runtime',
    'codex',
    '--model',
    MODEL,
    '--prompt-file',
    prompt,
    '--tools',
    tools.join(','),
  ]);
}

describe('Codex as a runtime', () => {
  it('runs a whole goal, priced from the rate card, resuming the coordinator’s thread', async (t) => {
    const c = await realColony('colony-codex-goal-', teamScript('writer'), KEY);
    t.after(() => c.close());
    // The owner's coordinator on Codex (its default placeholder model is no Codex model).
    agent(c, 'coordinator', COORDINATOR_TOOLS);
    agent(c, 'writer', ['read_inbox', 'claim_task', 'complete_task']);
    const card = join(c.dir, 'rates.json');
    writeFileSync(card, JSON.stringify({ [MODEL]: { input: 10, output: 40 } }));
    c.ok(['config', 'set', 'rate-card', card]);
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
      180_000,
    );
    const runs = (await c.settled()).filter((r) => r.status !== 'refused');
    assert.ok(runs.length >= 4, JSON.stringify(runs));
    for (const r of runs) {
      assert.equal(r.status, 'succeeded', JSON.stringify(r));
      assert.deepEqual([r.runtime, r.billing_lane, r.cost_known], ['codex', 'api', true], JSON.stringify(r));
      // Each turn is 1,200 tokens in and 300 out: at $10 and $40 per Mtok, 2.4¢ a turn.
      assert.ok(r.tokens_in >= 1200 && r.tokens_out >= 300 && r.cost_cents >= 2, JSON.stringify(r));
    }
    // The coordinator's runs on the goal itself are one Codex thread, resumed (a task's runs are another); each
    // run counts only its own turns, not the thread's so far.
    const onGoal = runs.filter((r) => r.agent_id === runs.find((x) => x.run_id === 1)!.agent_id && r.task_id === null);
    assert.ok(onGoal.length >= 2, JSON.stringify(runs));
    assert.equal(new Set(onGoal.map((r) => r.cli_session)).size, 1, JSON.stringify(onGoal));
    for (const r of onGoal) assert.ok(r.tokens_in === 4 * r.tokens_out && r.tokens_out <= 4 * 300, JSON.stringify(r));
    // Run 1 is the coordinator's first: it reads the goal.
    const show = c.ok(['runs', 'show', '1']);
    assert.match(show, /colony\.get_goal \{"goal_id":1\} → ok/);
    assert.doesNotMatch(show, /"type":"item\.completed"/);
    assert.ok(c.endpoint.requests.every((q) => q.headers.authorization === 'Bearer sk-scripted'));
  });

  it('without a rate card its cost is unknown; a refused key fails with one DM', async (t) => {
    let mode: 'call' | 'key' = 'call';
    const call = callToolThenFinish('read_inbox', { mark_read: false }, 'Nothing new.');
    const c = await realColony(
      'colony-codex-fail-',
      (turn) => (mode === 'key' ? { error: { status: 401, message: 'Incorrect API key provided' } } : call(turn)),
      KEY,
    );
    t.after(() => c.close());
    agent(c, 'lister', ['read_inbox']);
    await c.serve();
    c.ok(['agents', 'wake', 'lister']);
    const ok = await c.ended(1);
    assert.deepEqual([ok.status, ok.cost_known, ok.cost_cents, ok.billing_lane], ['succeeded', false, 0, 'api']);
    assert.ok(ok.tokens_in > 0, JSON.stringify(ok));
    assert.match(c.ok(['runs', 'show', '1']), /cost unknown/);
    mode = 'key';
    for (const n of [2, 3]) {
      c.ok(['agents', 'wake', 'lister']);
      const r = await c.ended(n);
      assert.deepEqual([r.status, r.cause], ['failed', 'auth'], JSON.stringify(r));
      assert.match(r.reason ?? '', /Codex's credentials were refused: .*colony secrets set/);
    }
    const dms = c.dms();
    assert.equal(dms.length, 1, dms.join('\n---\n'));
    assert.match(dms[0]!, /agent lister failed: Codex's credentials were refused/);
  });
});
