import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { stopAgent } from '../../src/actions/runs/agent-controls.js';
import { createProbe, type CreatedProbe } from '../../src/actions/probes.js';
import { probeEnvelope } from '../../src/commands/probes.js';
import { getProbe, type ProbeRow } from '../../src/projections/probes.js';
import { listRuns, runtimeOf } from '../../src/projections/run-queries.js';
import { sessionMessages } from '../../src/projections/session-message-queries.js';
import { runtimeFixture, type RuntimeFixture } from '../helpers/runtime.js';
import { speakerOf } from '../../src/actions/principals.js';

/**
 * Probes with the runtime: a fired probe wakes its agent (a run
 * with source `probe` whose prompt holds the envelope); probes expire when their agent is stopped or a
 * run of it fails, while a fired probe keeps its expires_at; a run that succeeds leaves them alone.
 */
let f: RuntimeFixture;
before(async () => {
  f = await runtimeFixture();
});
after(() => f.close());

const actor = { actor: 'user:owner' };
const probe = (agentId: number, message: string): CreatedProbe =>
  createProbe(
    f.app,
    speakerOf(f.app, `user-${f.ownerId}`),
    { agentId: String(agentId), message, expiresInHours: 24 },
    actor,
  );
const fire = async (p: CreatedProbe) => {
  const res = await fetch(`${f.base}/probes/${p.token}`, { method: 'POST' });
  assert.equal(res.status, 200);
  return (await res.json()) as { fired_at: string; message_id: number };
};
const row = (p: CreatedProbe): ProbeRow => getProbe(f.app.engine.db, p.probe.probeId)!;
const now = () => f.app.engine.clock().toISOString();

describe('a fired probe wakes its agent', () => {
  it('runs it with source probe and the envelope in its prompt; a succeeding run leaves its other probes alone', async () => {
    const a = f.addRunner('prober', 'cat >/dev/null; echo woke');
    const fired = probe(a.agentId, 'Check the deploy.\nThen report back.');
    const other = probe(a.agentId, 'Later.');
    const shot = await fire(fired);
    await f.reactor.idle();
    const runs = listRuns(f.app.engine.db, { agentId: a.agentId, limit: 10 });
    assert.equal(runs.length, 1);
    assert.equal(runs[0]!.source, 'probe');
    assert.equal(runs[0]!.status, 'succeeded');
    // The DM is shown through the wake's prompt, under its creator's name: never as a message from `system`.
    assert.deepEqual(runs[0]!.wakes[0]!.messageIds, []);
    assert.equal(runs[0]!.wakes[0]!.by, `user-${f.ownerId}`);
    const prompt = sessionMessages(f.app.engine.db, runs[0]!.runId)[0]!;
    assert.equal(prompt.role, 'user');
    const owner = { key: `user-${f.ownerId}`, name: 'owner' };
    assert.ok(
      prompt.content.includes(
        probeEnvelope(fired.probe.probeId, shot.fired_at, 'Check the deploy.\nThen report back.', owner),
      ),
      prompt.content,
    );
    assert.ok(prompt.content.includes(`[#${shot.message_id} from owner (user) via probe ${fired.probe.probeId}]`));
    assert.ok(!prompt.content.includes('(system)'), prompt.content);
    assert.equal(runtimeOf(f.app.engine.db, a.agentId).status, 'idle', 'idle → executing → idle');
    assert.deepEqual(row(other), other.probe, 'untouched by a run that succeeded');
    assert.equal(row(fired).firedAt, shot.fired_at);
  });
});

describe('probes expire when their agent stops or errors (the expire_probes_on_agent_stop trigger)', () => {
  it('stopAgent expires the active probes (expires_at <= now, fired_at still null); a fired one keeps its expires_at', async () => {
    const a = f.addRunner('stoppable', 'cat >/dev/null');
    const [one, two, shot] = [probe(a.agentId, 'one'), probe(a.agentId, 'two'), probe(a.agentId, 'fired')];
    await fire(shot);
    await f.reactor.idle();
    stopAgent(f.app, f.ownerId, a.agentId, 'owner', 'maintenance', actor);
    for (const p of [one, two]) {
      const r = row(p);
      assert.ok(r.expiresAt <= now() && r.expiresAt < p.probe.expiresAt, r.expiresAt);
      assert.equal(r.firedAt, null);
      assert.equal(r.expiredReason, 'agent_stopped');
    }
    assert.equal(row(shot).expiresAt, shot.probe.expiresAt);
    assert.equal(row(shot).expiredReason, null);
  });

  it("a failing run (exit 1) expires the agent's active probes, reason agent_error; the fired one that woke it keeps its expires_at", async () => {
    const a = f.addRunner('crasher', 'cat >/dev/null; echo boom >&2; exit 1');
    const [waiting, shot] = [probe(a.agentId, 'still waiting'), probe(a.agentId, 'wake and crash')];
    await fire(shot);
    await f.reactor.idle();
    const run = listRuns(f.app.engine.db, { agentId: a.agentId, limit: 10 })[0]!;
    assert.equal(run.source, 'probe');
    assert.equal(run.status, 'failed');
    assert.equal(runtimeOf(f.app.engine.db, a.agentId).status, 'error');
    assert.equal(row(waiting).expiredReason, 'agent_error');
    assert.ok(row(waiting).expiresAt <= now());
    assert.equal(row(waiting).firedAt, null);
    assert.equal(row(shot).expiresAt, shot.probe.expiresAt);
    const late = await fetch(`${f.base}/probes/${waiting.token}`, { method: 'POST' });
    assert.equal(late.status, 410);
  });
});
