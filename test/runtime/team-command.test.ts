import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, it } from 'node:test';
import { updateAgent } from '../../src/actions/agents.js';
import { registerAgent, setAgentCommand } from '../../src/actions/principals.js';
import { getAgent, getAgentByName } from '../../src/projections/principal-queries.js';
import { listRuns, type RunRow } from '../../src/projections/run-queries.js';
import { writeExclusive, writeMcpConfig } from '../../src/runtime/mcp-config.js';
import { SANDBOX_HOME } from '../../src/runtime/sandbox.js';
import { ok } from '../helpers/calls.js';
import { type RuntimeFixture, runtimeWithOwner } from '../helpers/runtime.js';

/**
 * The team's agent command: the default coordinator — created with no command of its own —
 * runs on `goal_created` with the owner's `agent-command`, and the run gets a ready MCP client
 * configuration ($COLONY_MCP_CONFIG) that a CLI agent can use as it is: the worker fixture connects with
 * nothing else. An agent's own command wins; updating an agent never copies the team's into it.
 */
const WORKER = `node --import ${import.meta.resolve('tsx')} ${join(process.cwd(), 'test/fixtures/agents/worker.ts')}`;
const OWNER = { actor: 'user:owner' };

const runsOf = (f: RuntimeFixture, agentId: number): RunRow[] =>
  listRuns(f.app.engine.db, { agentId, limit: 100 }).reverse();

describe("the team's agent command", () => {
  it('runs the default coordinator on goal_created, and the run connects with $COLONY_MCP_CONFIG alone', async (t) => {
    const f = await runtimeWithOwner(t);
    setAgentCommand(f.app, f.ownerId, `WORKER_USE_MCP_CONFIG=1 WORKER_HELLO=my_status ${WORKER}`, OWNER);
    const g = await ok(f.owner, 'create_goal', {
      title: 'A goal that plans itself',
      description: 'The coordinator is woken with the team command.',
      coordinator_config: 'default',
    });
    await f.reactor.idle();
    const coordinator = getAgentByName(f.app.engine.db, f.ownerId, 'coordinator')!;
    assert.deepEqual(
      [coordinator.ownCommand, coordinator.command],
      [null, `WORKER_USE_MCP_CONFIG=1 WORKER_HELLO=my_status ${WORKER}`],
    );
    const [run] = runsOf(f, coordinator.agentId);
    assert.deepEqual(
      [run?.source, run?.status, run?.goalId],
      ['goal_created', 'succeeded', g.goal_id],
      run?.outputTail ?? 'no run',
    );

    const home = join(f.app.dataDir, 'homes', 'coordinator');
    const seen = JSON.parse(
      readFileSync(join(f.app.dataDir, 'workspace', 'agents', 'coordinator', `run-${run!.runId}.json`), 'utf8'),
    ) as {
      env: Record<string, string>;
      mcpConfig: { mcpServers: { colony: { type: string; url: string; headers: Record<string, string> } } };
    };
    // Straight in the home the sandbox sees, under a name the agent cannot guess beforehand (it could plant a symlink there).
    assert.match(
      seen.env.COLONY_MCP_CONFIG!,
      new RegExp(`^${SANDBOX_HOME}/\\.colony-mcp-[0-9a-f]{24}\\.json$`),
      'the path as the confined process sees it',
    );
    assert.deepEqual(seen.mcpConfig, {
      mcpServers: {
        colony: {
          type: 'http',
          url: seen.env.COLONY_URL,
          headers: { Authorization: `Bearer ${seen.env.COLONY_TOKEN}` },
        },
      },
    });
    assert.match(seen.env.COLONY_TOKEN!, /^colony_/);
    assert.deepEqual(
      readdirSync(home).filter((n) => n.startsWith('.colony-mcp-')),
      [],
      'the file with the token is gone once the run ended',
    );
  });

  it("an agent's own command wins; updating an agent keeps following the team; no command anywhere means no run", async (t) => {
    const f = await runtimeWithOwner(t);
    const spec = {
      ownerId: f.ownerId,
      model: 'scripted',
      systemPrompt: 'You are a scripted test agent.',
      toolScope: ['whoami'],
      tier: 'supervised' as const,
      parentId: null,
      spawnDepth: 0,
    };
    const own = registerAgent(f.app, { ...spec, name: 'own-backend', command: 'echo mine' }, OWNER);
    const team = registerAgent(f.app, { ...spec, name: 'team-backend', command: null }, OWNER);
    assert.equal(getAgent(f.app.engine.db, team.agentId)!.command, null);
    await ok(f.owner, 'create_goal', {
      title: 'A goal that waits',
      description: 'No command is set: nothing runs.',
      coordinator_config: 'default',
    });
    await f.reactor.idle();
    const coordinator = getAgentByName(f.app.engine.db, f.ownerId, 'coordinator')!;
    assert.deepEqual(
      runsOf(f, coordinator.agentId),
      [],
      'without an agent-command the goal waits for an outside coordinator',
    );

    setAgentCommand(f.app, f.ownerId, 'echo team', OWNER);
    assert.deepEqual(
      [getAgent(f.app.engine.db, own.agentId)!.command, getAgent(f.app.engine.db, team.agentId)!.command],
      ['echo mine', 'echo team'],
    );
    updateAgent(f.app, f.ownerId, team.agentId, { tier: 'assisted' }, OWNER);
    setAgentCommand(f.app, f.ownerId, 'echo changed', OWNER);
    const after = getAgent(f.app.engine.db, team.agentId)!;
    assert.deepEqual([after.tier, after.ownCommand, after.command], ['assisted', null, 'echo changed']);
    setAgentCommand(f.app, f.ownerId, null, OWNER);
    assert.deepEqual(
      [getAgent(f.app.engine.db, own.agentId)!.command, getAgent(f.app.engine.db, team.agentId)!.command],
      ['echo mine', null],
    );
  });

  it('writes the config 0600 into the home under a fresh random name, never through a planted symlink', (t) => {
    const home = mkdtempSync(join(tmpdir(), 'colony-home-'));
    t.after(() => rmSync(home, { recursive: true, force: true }));
    const victim = join(home, 'victim.txt');
    writeFileSync(victim, 'untouched');
    const env = { COLONY_URL: 'http://127.0.0.1:7070/mcp', HOME: SANDBOX_HOME };
    const a = writeMcpConfig(home, env, 'colony_token_a')!;
    const b = writeMcpConfig(home, env, 'colony_token_b')!;
    assert.notEqual(a.path, b.path);
    const hostA = join(home, basename(a.path));
    assert.equal(statSync(hostA).mode & 0o777, 0o600);
    assert.equal(
      JSON.parse(readFileSync(hostA, 'utf8')).mcpServers.colony.headers.Authorization,
      'Bearer colony_token_a',
    );
    a.remove();
    // Even at a name the agent did guess, the exclusive create refuses a symlink instead of writing through it.
    symlinkSync(victim, hostA);
    assert.throws(() => writeExclusive(hostA, 'a token'), /EEXIST/);
    assert.equal(readFileSync(victim, 'utf8'), 'untouched');
    b.remove();
    assert.deepEqual(readdirSync(home).sort(), [basename(a.path), 'victim.txt'].sort());
  });
});
