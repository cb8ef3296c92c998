import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { setSecret } from '../../src/actions/secrets.js';
import { readAll } from '../../src/engine/store.js';
import { CommandVerifier } from '../../src/runtime/verifier.js';
import { colony } from '../helpers/cli.js';
import { ok, refused } from '../helpers/calls.js';
import { mcpFixture } from '../helpers/mcp.js';

/**
 * Through a real MCP Client: an agent with a coordinator's ordinary scope tries to get
 * a command of its own run on the host (auto goal naming itself coordinator, a raw `cmd` verifier) and
 * to read the owner's secrets through it. Nothing of that runs: auto is the owner's, raw commands are
 * refused, verifiers run only the owner's recipes, with the task's secrets and the ones a recipe was
 * granted, and their output is masked in the common encodings too.
 */
delete process.env.COLONY_ALLOWED_ROOTS;
type Body = Record<string, unknown>;
const COORDINATOR_SCOPE = [
  'create_goal',
  'propose_task_tree',
  'claim_task',
  'complete_task',
  'get_goal',
  'list_verifiers',
];
const API_KEY = 'sk-live-0wner-secret-7f3a9c';
const TASK_TOKEN = 'task-token-5b1e77d2c0';

async function setup(t: TestContext) {
  // Autonomous: the most the owner can trust an agent with — its trees are approved at once in an auto goal.
  const f = await mcpFixture({ agent: { name: 'mallory', toolScope: COORDINATOR_SCOPE, tier: 'autonomous' } });
  t.after(() => f.close());
  const owner = await f.connect(f.ownerToken);
  const mallory = await f.connect(f.agentToken);
  const by = { key: `user-${f.owner.userId}`, name: f.owner.name, tenant: f.owner.userId };
  setSecret(f.app, by, { name: 'API_KEY', value: API_KEY, scope: 'user:owner' }, { actor: 'user:owner' });
  return { f, owner, mallory, by };
}

const EXFILTRATE = 'id; env; printf %s "$API_KEY" | base64';

describe('no process runs on the host unless the owner approved that exact command line', () => {
  it('an agent cannot create an auto goal, nor name a raw command as a verifier — nothing is written', async (t) => {
    const { f, mallory } = await setup(t);
    const text = await refused(
      f,
      mallory,
      'create_goal',
      {
        title: 'Self-approved goal',
        description: 'I coordinate and approve myself.',
        coordinator_config: 'mallory',
        approval_mode: 'auto',
      },
      'ErrApprovalModeForbidden',
    );
    assert.match(text, /owner's choice/);
    const g = await ok(mallory, 'create_goal', {
      title: 'Human goal',
      description: 'The owner approves this one.',
      coordinator_config: 'mallory',
    });
    for (const verifier of [
      { kind: 'command', cmd: EXFILTRATE },
      { kind: 'command', cmd: EXFILTRATE, recipe: 'x' },
      { kind: 'command', recipe: 'x', timeout_sec: 5 },
    ]) {
      const why = await refused(
        f,
        mallory,
        'propose_task_tree',
        {
          goal_id: g.goal_id,
          tree: { title: 'Leak it', description: 'Run my command on the host.', verifier_config: verifier },
        },
        'ErrRawCommandRefused',
      );
      assert.match(why, /recipe/);
    }
    await refused(
      f,
      mallory,
      'propose_task_tree',
      {
        goal_id: g.goal_id,
        tree: {
          title: 'Leak it',
          description: 'Name a recipe that is not there.',
          verifier_config: { kind: 'command', recipe: 'env-dump' },
        },
      },
      'ErrVerifierNotFound',
    );
  });

  it("even in an owner's auto goal nothing but a registered recipe can run, and only the owner registers one", async (t) => {
    const { f, owner, mallory } = await setup(t);
    await refused(f, mallory, 'add_verifier', { name: 'mine', command: EXFILTRATE }, 'ErrToolNotFound');
    const g = await ok(owner, 'create_goal', {
      title: 'Auto goal',
      description: 'The owner chose auto here.',
      coordinator_config: 'mallory',
      approval_mode: 'auto',
    });
    await refused(
      f,
      mallory,
      'propose_task_tree',
      {
        goal_id: g.goal_id,
        tree: {
          title: 'Leak it',
          description: 'Run my command on the host.',
          verifier_config: { kind: 'command', cmd: EXFILTRATE },
        },
      },
      'ErrRawCommandRefused',
    );
    await ok(owner, 'add_verifier', { name: 'unit-tests', command: 'test -f report.md && grep -q PASS report.md' });
    const p = await ok(mallory, 'propose_task_tree', {
      goal_id: g.goal_id,
      tree: {
        title: 'Tested work',
        description: "Work the owner's recipe checks.",
        verifier_config: { kind: 'command', recipe: 'unit-tests' },
      },
    });
    assert.equal(p.status, 'approved', "auto mode covers the owner's registered command");
    const events = readAll(f.app.engine.db, { limit: 10_000 });
    const created = events.find((e) => e.type === 'TaskCreated')!.data as { verifier: Body };
    assert.deepEqual(
      [created.verifier.recipe, created.verifier.cmd],
      ['unit-tests', 'test -f report.md && grep -q PASS report.md'],
      'the task records the exact command',
    );
    const listed = (await ok(mallory, 'list_verifiers')).verifiers as Body[];
    assert.deepEqual(
      listed.map((v) => [v.name, v.command]),
      [['unit-tests', 'test -f report.md && grep -q PASS report.md']],
    );
  });

  it('in human mode the approval card and `colony approve` show every command line in full, exactly as it will run', async (t) => {
    const { f, owner, mallory } = await setup(t);
    const long = `npm test -- --reporter=dot && ${'x'.repeat(300)} "quoted" $HOME`;
    await ok(owner, 'add_verifier', { name: 'suite', command: long, timeout_sec: 120, secrets: ['API_KEY'] });
    const g = await ok(mallory, 'create_goal', {
      title: 'Careful goal',
      description: 'The owner approves every tree.',
      coordinator_config: 'mallory',
    });
    const p = await ok(mallory, 'propose_task_tree', {
      goal_id: g.goal_id,
      tree: {
        title: 'Root task',
        description: 'Everything in one tree.',
        children: [
          {
            title: 'Checked leaf',
            description: 'The suite checks it.',
            verifier_config: { kind: 'command', recipe: 'suite' },
          },
        ],
      },
    });
    assert.equal(p.status, 'pending');
    const card = (
      (await ok(owner, 'get_channel_messages', { channel_name: 'approvals' })).messages as { body: string }[]
    )[0]!.body;
    assert.ok(card.includes(JSON.stringify(long)), card);
    assert.match(
      card,
      /recipe "suite": sh -c .* in the task's project, else the assignee's working directory \(read-only\), timeout 120s, with your secrets API_KEY/,
    );
    const approved = colony(['approve', String(p.proposal_id), '--data', f.dataDir]);
    assert.equal(approved.code, 0, approved.stderr);
    assert.ok(approved.stdout.includes(JSON.stringify(long)), approved.stdout);
    const json = colony(['approve', String(p.proposal_id), '--data', f.dataDir, '--json']);
    assert.notEqual(json.code, 0, 'approving twice is refused');
  });

  it("a verifier gets the task's secrets and the ones its recipe was granted — never the owner's others — and its output is masked in common encodings", async (t) => {
    const { f, owner, mallory, by } = await setup(t);
    const verifier = new CommandVerifier(f.app).start();
    t.after(() => verifier.stop());
    setSecret(
      f.app,
      by,
      { name: 'OTHER_KEY', value: 'other-owner-secret-91ab', scope: 'user:owner' },
      { actor: 'user:owner' },
    );
    const print =
      'for v in "$API_KEY" "$TASK_TOKEN" "$OTHER_KEY"; do printf "raw=%s\\n" "$v"; printf %s "$v" | base64; printf %s "$v" | od -An -tx1 | tr -d " \\n"; echo; done; env';
    await ok(owner, 'add_verifier', { name: 'leaky', command: print, secrets: ['API_KEY'] });
    const g = await ok(owner, 'create_goal', {
      title: 'Secret goal',
      description: 'A verifier that prints what it gets.',
      coordinator_config: 'mallory',
      approval_mode: 'auto',
    });
    const p = await ok(mallory, 'propose_task_tree', {
      goal_id: g.goal_id,
      tree: {
        title: 'Print keys',
        description: 'The check prints its env.',
        verifier_config: { kind: 'command', recipe: 'leaky' },
      },
    });
    const taskId = (p.task_ids as number[])[0]!;
    setSecret(f.app, by, { name: 'TASK_TOKEN', value: TASK_TOKEN, scope: `task:${taskId}` }, { actor: 'user:owner' });
    await ok(mallory, 'claim_task', { task_id: taskId });
    await ok(mallory, 'complete_task', { task_id: taskId, summary: 'done' });
    await verifier.idle();
    const leaf = ((await ok(mallory, 'get_goal', { goal_id: g.goal_id })).tasks_tree as Body[])[0]!;
    const output = leaf.verifier_output as string;
    assert.equal(leaf.status, 'done');
    assert.ok(
      !output.includes('other-owner-secret') &&
        !output.includes(Buffer.from('other-owner-secret-91ab').toString('base64')),
      'an ungranted user secret never reaches the process',
    );
    assert.match(output, /raw=\*\*\*\n\*\*\*\n\*\*\*\nraw=\*\*\*\n\*\*\*\n\*\*\*\nraw=\n/, output);
    for (const v of [API_KEY, TASK_TOKEN]) {
      for (const leak of [v, Buffer.from(v).toString('base64'), Buffer.from(v).toString('hex')])
        assert.ok(!output.includes(leak), `${leak} leaked`);
    }
    assert.doesNotMatch(output, /COLONY_TOKEN|COLONY_URL/, "no credential of Colony's own");
    const log = JSON.stringify(readAll(f.app.engine.db, { limit: 10_000 }));
    for (const v of [
      API_KEY,
      TASK_TOKEN,
      Buffer.from(API_KEY).toString('base64'),
      Buffer.from(TASK_TOKEN).toString('base64'),
    ])
      assert.ok(!log.includes(v), `${v} is in the log`);
  });

  it('a removed recipe runs no more: the task waits, the owner is told, no verdict is recorded', async (t) => {
    const { f, owner, mallory } = await setup(t);
    const verifier = new CommandVerifier(f.app).start();
    t.after(() => verifier.stop());
    await ok(owner, 'add_verifier', { name: 'check', command: 'true' });
    const g = await ok(owner, 'create_goal', {
      title: 'Recipe goal',
      description: 'The recipe goes away.',
      coordinator_config: 'mallory',
      approval_mode: 'auto',
    });
    const taskId = (
      (
        await ok(mallory, 'propose_task_tree', {
          goal_id: g.goal_id,
          tree: {
            title: 'Checked',
            description: 'Checked by the recipe.',
            verifier_config: { kind: 'command', recipe: 'check' },
          },
        })
      ).task_ids as number[]
    )[0]!;
    const ask = await ok(owner, 'remove_verifier', { name: 'check' });
    await ok(owner, 'remove_verifier', { name: 'check', confirmation_token: ask.confirm_token });
    await ok(mallory, 'claim_task', { task_id: taskId });
    await ok(mallory, 'complete_task', { task_id: taskId, summary: 'done' });
    await verifier.idle();
    await new Promise((r) => setTimeout(r, 50));
    const leaf = ((await ok(owner, 'get_goal', { goal_id: g.goal_id })).tasks_tree as Body[])[0]!;
    assert.equal(leaf.status, 'awaiting_verification');
    const dms = (await ok(owner, 'read_inbox', {})).messages as { body: string }[];
    assert.ok(
      dms.some((m) => /was not run: its verifier recipe "check" was removed/.test(m.body)),
      JSON.stringify(dms),
    );
  });
});
