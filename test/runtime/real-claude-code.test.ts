import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promptFile, realColony } from '../helpers/real-cli.js';
import { teamScript } from '../helpers/team-script.js';
import { callToolThenFinish } from '../../testkit/model-endpoint/index.js';

/**
 * The real Claude Code binary (@anthropic-ai/claude-code, pinned) as Colony's agents, confined, against the
 * scripted model endpoint: a whole goal — the coordinator's proposal, the owner's approval, the worker's
 * claim and hand-in, the goal completed — with each run's usage and Claude Code's own cost recorded in the
 * api lane; then the ways it fails, each a failed run with the reason and one owner DM per agent and cause.
 */
const KEY = { ANTHROPIC_API_KEY: () => 'sk-ant-scripted', ANTHROPIC_BASE_URL: (url: string) => url };

describe('Claude Code as a runtime', () => {
  it('runs a whole goal: proposal, approval, claim, completion, usage with cost', async (t) => {
    const c = await realColony('colony-claude-goal-', teamScript('writer'), KEY);
    t.after(() => c.close());
    c.ok(['config', 'set', 'agent-runtime', 'claude-code']);
    c.ok([
      'agents',
      'create',
      'writer',
      '--model',
      'claude-sonnet-4-5',
      '--prompt-file',
      promptFile(c.dir),
      '--tools',
      'read_inbox,claim_task,complete_task',
    ]);
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
      assert.deepEqual([r.runtime, r.billing_lane, r.cost_known], ['claude-code', 'api', true]);
      assert.ok(r.tokens_in >= 1200 && r.tokens_out >= 300 && r.cost_cents >= 1, JSON.stringify(r));
    }
    // The coordinator's runs on the goal itself resume one Claude Code session (a task's runs, another).
    const onGoal = runs.filter((r) => r.agent_id === runs.find((x) => x.run_id === 1)!.agent_id && r.task_id === null);
    assert.ok(onGoal.length >= 2, JSON.stringify(runs));
    assert.equal(new Set(onGoal.map((r) => r.cli_session)).size, 1, JSON.stringify(onGoal));
    // The transcript: the answer as the agent's message, the Colony calls as steps, not the raw stream.
    // Run 1 is the coordinator's first: it reads the goal.
    const show = c.ok(['runs', 'show', '1']);
    assert.match(show, /colony\.get_goal \{"goal_id":1\} → ok/);
    assert.doesNotMatch(show, /"type":"assistant"/);
    // Every call reached the endpoint with the agent's key, never anything else.
    assert.ok(
      c.endpoint.requests.every((q) => q.headers['x-api-key'] === 'sk-ant-scripted' || q.headers.authorization),
    );
  });

  it("fails honestly: the README's old line, denied at exit 0; a refused key — one DM per agent and cause; resumes", async (t) => {
    let mode: 'call' | 'key' = 'call';
    const call = callToolThenFinish('read_inbox', { mark_read: false }, 'I could not read it.');
    const c = await realColony(
      'colony-claude-fail-',
      (turn) => (mode === 'key' ? { error: { status: 401, message: 'invalid x-api-key' } } : call(turn)),
      KEY,
    );
    t.after(() => c.close());
    const prompt = promptFile(c.dir);
    // The line the README used to give: Claude Code asks permission for every Colony tool, nobody answers,
    // it exits 0 with permission_denials. Colony reads that result: the run failed, and says how to fix it.
    const oldLine = `${join(process.cwd(), 'node_modules/.bin/claude')} -p --output-format json --mcp-config "$COLONY_MCP_CONFIG"`;
    c.ok([
      'agents',
      'create',
      'old',
      '--model',
      'sonnet',
      '--prompt-file',
      prompt,
      '--tools',
      'read_inbox',
      '--command',
      oldLine,
    ]);
    c.ok([
      'agents',
      'create',
      'lister',
      '--runtime',
      'claude-code',
      '--model',
      'sonnet',
      '--prompt-file',
      prompt,
      '--tools',
      'read_inbox',
    ]);
    await c.serve();
    for (const n of [1, 2]) {
      c.ok(['agents', 'wake', 'old']);
      const r = await c.ended(n);
      assert.deepEqual([r.status, r.cause], ['failed', 'permission_denied'], JSON.stringify(r));
      assert.match(r.reason ?? '', /denied 1 tool call\(s\): mcp__colony__read_inbox .*--runtime claude-code/);
    }
    // The claude-code runtime allows exactly the agent's Colony tools: the same call goes through.
    c.ok(['agents', 'wake', 'lister']);
    const first = await c.ended(3);
    assert.equal(first.status, 'succeeded', JSON.stringify(first));
    // Its next wake resumes that session; once the session's files are gone from the agent's home (wiped,
    // a new machine) the resume fails, the run says so and goes on in a fresh one — no failure, no DM.
    c.ok(['agents', 'wake', 'lister']);
    const second = await c.ended(4);
    assert.ok(second.status === 'succeeded' && second.cli_session === first.cli_session, JSON.stringify(second));
    rmSync(join(c.dir, '.colony', 'homes', 'lister', '.claude', 'projects'), { recursive: true, force: true });
    c.ok(['agents', 'wake', 'lister']);
    const third = await c.ended(5);
    assert.equal(third.status, 'succeeded', JSON.stringify(third));
    assert.ok(third.cli_session && third.cli_session !== first.cli_session, JSON.stringify(third));
    assert.match(
      c.ok(['runs', 'show', '5']),
      /Claude Code could not resume its last session; this run starts a fresh one\./,
    );
    mode = 'key';
    for (const n of [6, 7]) {
      c.ok(['agents', 'wake', 'lister']);
      const r = await c.ended(n);
      assert.deepEqual([r.status, r.cause], ['failed', 'auth'], JSON.stringify(r));
      assert.match(r.reason ?? '', /Claude Code's credentials were refused: .*colony secrets set/);
    }
    const dms = c.dms();
    assert.equal(
      dms.filter((d) => /agent old failed: .*denied/.test(d)).length,
      1,
      `one DM for two denied runs:\n${dms.join('\n---\n')}`,
    );
    assert.equal(
      dms.filter((d) => /agent lister failed: .*credentials were refused/.test(d)).length,
      1,
      dms.join('\n---\n'),
    );
    assert.equal(dms.length, 2);
  });

  it('a CLI that crashes, and one that is gone, each end as a failed run with the reason and one DM', async (t) => {
    const c = await realColony('colony-claude-crash-', callToolThenFinish('read_inbox'), KEY);
    t.after(() => c.close());
    // Where a person installs a CLI of their own: a directory the sandbox's uid may enter (the scratch dir is 0700).
    const bin = join(c.dir, 'bin');
    mkdirSync(bin, { mode: 0o755 });
    chmodSync(bin, 0o755);
    const crash = join(bin, 'claude-crashing');
    writeFileSync(crash, '#!/bin/sh\necho "Segmentation fault in the CLI" >&2\nexit 139\n');
    chmodSync(crash, 0o755);
    c.ok([
      'agents',
      'create',
      'lister',
      '--runtime',
      'claude-code',
      '--model',
      'sonnet',
      '--prompt-file',
      promptFile(c.dir),
      '--tools',
      'read_inbox',
    ]);
    // Crashing: the binary the owner named (COLONY_CLAUDE_BIN) exits 139 without a result.
    const crashing = await c.serve({ COLONY_CLAUDE_BIN: crash });
    c.ok(['agents', 'wake', 'lister']);
    let r = await c.ended(1);
    assert.deepEqual([r.status, r.cause], ['failed', 'crash'], JSON.stringify(r));
    assert.match(r.reason ?? '', /Claude Code ended without a result \(exit 139\): Segmentation fault in the CLI/);
    await crashing.stop();
    // Gone: the named binary is not there when the run starts; the run fails at once, with the fix.
    await c.serve({ COLONY_CLAUDE_BIN: join(c.dir, 'no-such-claude') });
    c.ok(['agents', 'wake', 'lister']);
    r = await c.ended(2);
    assert.deepEqual([r.status, r.cause], ['failed', 'not_found'], JSON.stringify(r));
    assert.match(r.reason ?? '', /COLONY_CLAUDE_BIN=.*no-such-claude is not an executable file/);
    const dms = c.dms();
    assert.equal(dms.length, 2, dms.join('\n---\n'));
    assert.match(dms[0]!, /Run #1 of agent lister failed: Claude Code ended without a result/);
    assert.match(dms[1]!, /Run #2 of agent lister failed: Claude Code: COLONY_CLAUDE_BIN/);
    // doctor says it before any run, with the fix.
    const doctor = c.cli(['doctor'], { COLONY_CLAUDE_BIN: join(c.dir, 'no-such-claude') });
    assert.equal(doctor.code, 1);
    assert.match(doctor.stdout, /^FAIL claude-code binary: COLONY_CLAUDE_BIN=.*is not an executable file/m);
  });
});
