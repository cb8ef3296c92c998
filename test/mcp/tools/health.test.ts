import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { materializePositions } from '../../../src/engine/anchor.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { lastVerifyFile } from '../../../src/engine/last-verify.js';
import { colony } from '../../helpers/cli.js';
import { callTool, mcpFixture, textOf, type McpFixture } from '../../helpers/mcp.js';

/**
 * system_health over a real MCP Client: the database, the chain head, the last
 * `colony verify` (run as the real CLI, which records its outcome in <data>/last-verify.json), each
 * projection at the head or BEHIND, and the caller's tenant's counts — on an empty store and a busy one.
 */
delete process.env.COLONY_ALLOWED_ROOTS;

type Health = {
  db: { state: string; path: string };
  chain: { position: number; hash: string };
  last_verification: { state: string; at?: string; position?: number; reason?: string };
  projections: { name: string; state: string; position: number }[];
  projects: number;
  goals: Record<string, number>;
  tasks: Record<string, number>;
  agents: Record<string, number>;
  data_dir: string;
};
let f: McpFixture;
let agent: Client;
before(async () => {
  f = await mcpFixture();
  agent = await f.connect(f.agentToken);
});
after(() => f.close());

async function health(c: Client = agent): Promise<{ text: string; h: Health }> {
  const { result, body } = await callTool(c, 'system_health');
  assert.ok(!result.isError, textOf(result));
  return { text: textOf(result), h: body as unknown as Health };
}

describe('system_health', () => {
  it('on an empty store: db OK, projects 0, never verified, every projection at the head', async () => {
    const { text, h } = await health();
    const pos = f.app.engine.head().position;
    const lines = text.split('\n');
    assert.equal(lines[0], '# Colony health');
    assert.equal(lines[1], `- db: OK (\`${join(f.dataDir, 'colony.db')}\`, journal wal)`);
    assert.equal(lines[2], `- chain: head at position ${pos}, hash ${f.app.engine.head().hash}`);
    assert.equal(lines[3], '- last_verification: never (run `colony verify`)');
    const n = f.app.engine.projections.projections.length;
    assert.equal(lines[4], `- projections: ${n}/${n} at the head`);
    assert.ok(lines.includes(`  - projects: OK (position ${pos})`));
    assert.deepEqual(lines.slice(5 + n), [
      '- projects: 0 (active)',
      '- goals: 0',
      '- tasks: 0 (all-time)',
      '- agents: 1 total, 0 active (idle=1)',
      `- data_dir: \`${f.dataDir}\``,
    ]);
    assert.ok(text.includes('db: OK') && text.includes('projects: 0'), "xylocopa's acceptance check 2");
    assert.deepEqual(
      [h.db.state, h.chain.position, h.last_verification.state, h.projects, h.goals, h.tasks, h.agents],
      ['OK', pos, 'never', 0, {}, {}, { idle: 1 }],
    );
    assert.ok(h.projections.every((p) => p.state === 'OK' && p.position === pos));
  });

  it("on a busy store: the tenant's projects, goals and tasks by status, agents by runtime status", async () => {
    const owner = await f.connect(f.ownerToken);
    for (const name of ['alpha', 'beta']) await callTool(agent, 'project_create', { name });
    const goal = await callTool(owner, 'create_goal', {
      title: 'Health check goal',
      description: 'A goal so that health has goals and tasks to count.',
      coordinator_config: 'worker',
      approval_mode: 'auto',
    });
    const goalId = (goal.body as { goal_id: number }).goal_id;
    // The owner proposes: a supervised agent's tree would wait for approval even in auto mode (autonomy tiers).
    const tree = await callTool(owner, 'propose_task_tree', {
      goal_id: goalId,
      tree: {
        title: 'Root task',
        description: 'The root of the tree.',
        children: [{ title: 'Leaf task', description: 'A leaf of the tree.' }],
      },
    });
    assert.ok(!tree.result.isError, textOf(tree.result));
    const { text, h } = await health();
    assert.equal(h.projects, 2);
    assert.ok(text.includes('- projects: 2 (active)'));
    const goals = Object.entries(h.goals);
    assert.equal(
      goals.reduce((a, [, n]) => a + n, 0),
      1,
    );
    assert.ok(text.includes(`- goals: 1 (${goals[0]![0]}=1)`), text);
    const tasks = Object.values(h.tasks).reduce((a, b) => a + b, 0);
    assert.equal(tasks, 2);
    assert.match(text, new RegExp(`- tasks: 2 \\(all-time\\) \\((\\w+=\\d+(, )?)+\\)`));
    assert.deepEqual(h.agents, { idle: 1 });
    const rival = await f.connect(f.addOwner('rival').token);
    const theirs = (await health(rival)).h;
    assert.deepEqual(
      [theirs.projects, theirs.goals, theirs.tasks, theirs.agents],
      [0, {}, {}, {}],
      "counts are the caller's tenant's",
    );
    assert.equal(theirs.chain.position, f.app.engine.head().position, "the chain is the whole store's");
  });

  it('shows the last colony verify: when, up to which position, and whether it held', async () => {
    const verified = f.app.engine.head();
    const ok = colony(['verify', '--data', f.dataDir]);
    assert.equal(ok.code, 0, ok.stderr);
    await callTool(agent, 'project_create', { name: 'after-verify' });
    const { text, h } = await health();
    assert.equal(h.last_verification.state, 'ok');
    assert.equal(h.last_verification.position, verified.position);
    assert.match(
      text,
      new RegExp(
        `- last_verification: OK at \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z, up to position ${verified.position} \\(1 events since\\)`,
      ),
    );
    const bad = colony(['verify', '--data', f.dataDir, '--expect-head', `1:${'0'.repeat(64)}`]);
    assert.equal(bad.code, 1);
    const failed = await health();
    assert.equal(failed.h.last_verification.state, 'failed');
    assert.match(
      failed.text,
      /- last_verification: FAILED at \S+, at position 1: head_mismatch \(position 1 no longer has the recorded head hash/,
    );
    writeFileSync(lastVerifyFile(f.dataDir), '{not json');
    assert.ok((await health()).text.includes(`- last_verification: UNREADABLE (\`${lastVerifyFile(f.dataDir)}\`)`));
  });

  it('marks a projection that has not applied the log up to the head as BEHIND', async () => {
    const db = f.app.engine.db;
    const pos = f.app.engine.head().position;
    materializePositions(db); // the rows alone say where each projection is (engine/projection-positions.ts)
    db.prepare("UPDATE es_projections SET position = position - 1 WHERE name = 'probes'").run();
    try {
      const { text, h } = await health();
      const n = h.projections.length;
      assert.ok(text.includes(`- projections: ${n - 1}/${n} at the head`));
      assert.ok(text.includes(`  - probes: BEHIND (position ${pos - 1} of ${pos})`), text);
      assert.equal(h.projections.find((p) => p.name === 'probes')!.state, 'BEHIND');
    } finally {
      db.prepare("UPDATE es_projections SET position = ? WHERE name = 'probes'").run(pos);
    }
  });
});
