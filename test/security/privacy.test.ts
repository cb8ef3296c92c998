import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { configureRuntime } from '../../src/actions/runs/agent-controls.js';
import { registerAgent } from '../../src/actions/principals.js';
import { listRuns } from '../../src/projections/run-queries.js';
import { runtimeFixture } from '../helpers/runtime.js';
import { okText } from '../helpers/calls.js';

/**
 * Over real HTTP with real agent processes: alice DMs dana, an agent Colony runs; the
 * DM and dana's system prompt are in dana's wake prompt, so in its session transcript. carol, a peer,
 * reads none of it — not by session_read / session_tail / get_agent_memory, not in session_list, not
 * in agent_get's or agent_list's preview. dana reads its own, the agent it spawned cannot read dana's,
 * dana reads that child's; the owner reads everything.
 */
const READ_TOOLS = [
  'session_list',
  'session_read',
  'session_tail',
  'get_agent_memory',
  'agent_get',
  'agent_list',
  'send_message',
];
const SECRET_DM = 'the vault code is 4471, tell no one';

describe('transcripts are private to their agent, the agents that spawned it and the owner', () => {
  it("a peer reads nothing of another agent's session; lineage upwards and the owner do", async (t) => {
    const f = await runtimeFixture();
    t.after(() => f.close());
    const dana = f.addRunner('dana', 'cat >/dev/null; echo handled', {}, { toolScope: READ_TOOLS });
    const alice = f.addRunner('alice', 'true', {}, { toolScope: READ_TOOLS });
    const carol = f.addRunner('carol', 'true', {}, { toolScope: READ_TOOLS });
    const child = registerAgent(
      f.app,
      {
        name: 'scout',
        ownerId: f.ownerId,
        model: 'scripted',
        systemPrompt: 'You help dana with her work.',
        toolScope: READ_TOOLS,
        tier: 'supervised',
        command: 'cat >/dev/null; echo helped',
        parentId: dana.agentId,
        spawnDepth: 1,
      },
      { actor: 'user:owner' },
    );
    configureRuntime(f.app, f.ownerId, child.agentId, { cooldownSec: 0 }, 'owner', { actor: 'user:owner' });

    await okText(await f.connect(alice.token), 'send_message', { to: 'dana', body: SECRET_DM });
    await f.reactor.idle();
    const [run] = listRuns(f.app.engine.db, { agentId: dana.agentId, limit: 5 });
    assert.equal(run?.status, 'succeeded');
    await f.reactor.whenDone(f.reactor.wake({ agentId: child.agentId, source: 'manual', by: 'user-1' }).run.runId);
    const [childRun] = listRuns(f.app.engine.db, { agentId: child.agentId, limit: 5 });
    const sid = run!.sessionId!;

    const owner = await f.connect(f.ownerToken);
    assert.match(
      await okText(owner, 'session_read', { session_id: 'dana' }),
      new RegExp(SECRET_DM),
      'the owner reads it',
    );
    const danaClient = await f.connect(dana.token);
    assert.match(
      await okText(danaClient, 'session_read', { session_id: sid }),
      new RegExp(SECRET_DM),
      'dana reads its own',
    );
    assert.match(
      await okText(danaClient, 'session_read', { session_id: childRun!.sessionId! }),
      /helped/,
      'dana reads the agent it spawned',
    );

    const readers = [
      { reader: await f.connect(carol.token), own: [] as string[] },
      { reader: await f.connect(child.token), own: [childRun!.sessionId!] },
    ];
    for (const { reader, own } of readers) {
      for (const id of ['dana', sid, sid.slice(0, 6), String(dana.agentId)]) {
        // A session id is random hex: dana's agent id may also be a prefix of the reader's own session
        // id, which the lookup rightly finds (a reader sees its own session).
        if (own.some((s) => s.startsWith(id))) continue;
        for (const tool of ['session_read', 'session_tail'])
          assert.equal(
            await okText(reader, tool, { session_id: id }),
            `No agent found matching: ${id}`,
            `${tool}(${id})`,
          );
      }
      assert.deepEqual(JSON.parse(await okText(reader, 'get_agent_memory', { session_id: sid })), {
        status: 'error',
        message: `Session ${sid} not found.`,
      });
      assert.doesNotMatch(await okText(reader, 'session_list'), /\*\*dana\*\*/);
      for (const shown of [
        await okText(reader, 'agent_get', { agent_id: 'dana' }),
        await okText(reader, 'agent_list'),
      ]) {
        assert.ok(!shown.includes(SECRET_DM) && !shown.includes('handled'), shown);
        assert.match(shown, /private/);
      }
    }
  });
});
