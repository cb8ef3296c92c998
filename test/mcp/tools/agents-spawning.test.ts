import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { recordEvidence, reputationOf } from '../../../src/actions/reputation.js';
import { TIERS, type Tier } from '../../../src/events/principals.js';
import { readAll } from '../../../src/engine/store.js';
import { unseal } from '../../../src/masterkey.js';
import { getTask, tasksOfGoal } from '../../../src/projections/task-queries.js';
import { getProposal } from '../../../src/projections/proposal-queries.js';
import { getAgent, getAgentByName, sealedTokenOf, type AgentRow } from '../../../src/projections/principal-queries.js';
import { colony } from '../../helpers/cli.js';
import { mcpFixture, type McpFixture } from '../../helpers/mcp.js';
import { configHash } from '../../../src/events/agent-config.js';
import { ok, refusal } from '../../helpers/calls.js';

/**
 * Spawning through a real SDK Client, the race on spawn included: proposals checked against the spawn depth and
 * the delegation cap before anything is written, the owner's approve / reject reaction, materialization
 * (config hash, parent, depth, effective tier and scope, 70 % reputation seed, a DM without the token),
 * the spawned agent's token, auto mode, and bad input — which appends nothing.
 */
type Body = Record<string, unknown>;
type Msg = {
  message_id: number;
  body: string;
  from: string;
  kind: string;
  metadata: Record<string, unknown> | null;
  reactions: { reaction: string; by: string }[];
};

let f: McpFixture;
let owner: Client;
let lead: Client;
let leadAgent: { agentId: number; name: string; token: string };
/** Every MCP result seen by this file, serialized: no agent token may ever appear in one. */
const transcript: string[] = [];
/** Every spawned agent's token (revealed via the sealed copy), checked against the transcript and the data dir at the end. */
const spawnedTokens = new Map<string, string>();

const DESCRIPTION = 'Keep every page of the documentation site accurate against the code.';
const PROMPT = 'You write reference documentation for one module at a time, precisely and briefly.';
/** The tools every proposer here holds (propose_agent among them). */
const PROPOSER_TOOLS = [
  'get_channel_messages',
  'list_channels',
  'my_status',
  'propose_agent',
  'read_inbox',
  'search_messages',
  'send_message',
  'whoami',
];

let titles = 0;
/** A goal (owner-made, unique title) with one approved task; returns the goal and that task. */
async function goalWithTask(extra: Body = {}): Promise<{ goalId: number; taskId: number; channelId: number }> {
  titles += 1;
  const g = await ok(owner, 'create_goal', { title: `Spawning goal ${titles}`, description: DESCRIPTION, ...extra });
  const goalId = g.goal_id as number;
  const p = await ok(owner, 'propose_task_tree', {
    goal_id: goalId,
    tree: { title: `Document module ${titles}`, description: 'Write the reference page for the module.' },
  });
  if (p.status !== 'approved')
    await ok(owner, 'react', { message_id: p.proposal_message_id as number, reaction: 'approve' });
  const [task] = tasksOfGoal(f.app.engine.db, goalId);
  assert.ok(task && task.status === 'approved', 'the goal has an approved task');
  return { goalId, taskId: task.taskId, channelId: g.channel_id as number };
}

/** propose_agent's arguments: a valid proposal for `name` unless overridden (the prompt names it, so each config hash is its own). */
const proposal = (goal: { goalId: number; taskId: number }, name: string, extra: Body = {}): Body => ({
  goal_id: goal.goalId,
  parent_task_id: goal.taskId,
  name,
  model: 'claude-sonnet-4-5',
  system_prompt: `${PROMPT} You are ${name}.`,
  tool_scope: ['whoami', 'read_inbox', 'get_channel_messages'],
  autonomy_tier: 'supervised',
  reason: 'The module needs a dedicated writer.',
  ...extra,
});

const approvals = async (): Promise<Msg[]> =>
  (await ok(owner, 'get_channel_messages', { channel_name: 'approvals', limit: 200 })).messages as Msg[];
const inboxOf = async (client: Client): Promise<Msg[]> =>
  (await ok(client, 'read_inbox', { include_read: true, limit: 200 })).messages as Msg[];
const eventsAfter = (position: number) => readAll(f.app.engine.db, { after: position, limit: 100_000 });
const agentNamed = (name: string): AgentRow | null => getAgentByName(f.app.engine.db, f.owner.userId, name);
const tokenOf = (agentId: number): string => unseal(f.app.key, sealedTokenOf(f.app.engine.db, agentId)!);
const approve = (messageId: number) => ok(owner, 'react', { message_id: messageId, reaction: 'approve' });

/** An agent of the fixture owner with a client; proposers hold PROPOSER_TOOLS. */
async function proposer(
  name: string,
  tier: Tier,
  spawnDepth = 0,
  parentId: number | null = null,
): Promise<{ client: Client; agentId: number }> {
  const a = f.addAgent(name, { tier, toolScope: PROPOSER_TOOLS, spawnDepth, parentId: parentId ?? undefined });
  return { client: await f.connect(a.token), agentId: a.agentId };
}

/** Every file of the data dir, as bytes (colony.db, its WAL, the audit db, logs …). */
function dataDirBytes(dir: string): { file: string; bytes: Buffer }[] {
  const out: { file: string; bytes: Buffer }[] = [];
  for (const name of readdirSync(dir)) {
    const file = join(dir, name);
    if (statSync(file).isDirectory()) out.push(...dataDirBytes(file));
    else out.push({ file, bytes: readFileSync(file) });
  }
  return out;
}

before(async () => {
  f = await mcpFixture({ onToolResult: (result) => transcript.push(JSON.stringify(result)) });
  owner = await f.connect(f.ownerToken);
  leadAgent = f.addAgent('lead', { tier: 'assisted', toolScope: PROPOSER_TOOLS, spawnDepth: 0 });
  lead = await f.connect(leadAgent.token);
});
after(() => f.close());

describe("propose_agent and the owner's approval", () => {
  let goal: { goalId: number; taskId: number; channelId: number };
  let proposed: Body;
  let child: AgentRow;
  const spec = {
    name: 'doc-writer',
    model: 'claude-sonnet-4-5',
    system_prompt: PROMPT,
    autonomy_tier: 'assisted',
    tool_scope: ['whoami', 'read_inbox', 'get_channel_messages'],
    skills: ['markdown', 'api-docs'],
    mcp_servers: [{ name: 'fs', url: 'http://127.0.0.1:9000/mcp', transport: 'http' }],
    subagents: ['linter'],
    reason: 'The API reference needs a dedicated writer.',
  };

  before(async () => {
    goal = await goalWithTask();
  });

  it("a depth-0 agent's proposal is recorded and posted once to #approvals; no agent exists yet", async () => {
    const before = (await approvals()).length;
    const head = f.app.engine.head().position;
    proposed = await ok(lead, 'propose_agent', { goal_id: goal.goalId, parent_task_id: goal.taskId, ...spec });
    assert.deepEqual(Object.keys(proposed).sort(), ['agent_id', 'approval_message_id', 'proposal_id', 'status']);
    assert.ok(Number.isInteger(proposed.proposal_id) && Number.isInteger(proposed.approval_message_id));
    assert.equal(proposed.status, 'pending');
    assert.equal(proposed.agent_id, null);

    const after = await approvals();
    assert.equal(after.length, before + 1, 'exactly one message in #approvals');
    const msg = after.at(-1)!;
    assert.equal(msg.message_id, proposed.approval_message_id);
    assert.equal(msg.from, 'lead');
    assert.equal(msg.metadata?.kind, 'agent_proposal');
    assert.equal(msg.metadata?.proposal_id, proposed.proposal_id);
    assert.equal(msg.metadata?.goal_id, goal.goalId);
    assert.equal(msg.metadata?.parent_task_id, goal.taskId);
    assert.equal(msg.metadata?.name, 'doc-writer');
    assert.match(msg.body, /doc-writer/);
    assert.doesNotMatch(JSON.stringify(msg), /colony_/, 'nothing shaped like a token in the approval message');

    assert.equal(agentNamed('doc-writer'), null, 'no agent before approval');
    const p = getProposal(f.app.engine.db, proposed.proposal_id as number)!;
    assert.deepEqual(
      [p.kind, p.status, p.goalId, p.parentTaskId, p.proposerName, p.agentId],
      ['agent', 'pending', goal.goalId, goal.taskId, 'lead', null],
    );
    const types = eventsAfter(head).map((e) => e.type);
    assert.ok(types.includes('AgentProposed'), types.join());
    assert.ok(
      !types.some((t) => t === 'AgentRegistered' || t === 'TokenIssued' || t === 'EvidenceRecorded'),
      types.join(),
    );
  });

  it("the owner's approve reaction creates the agent in one command: config hash, parent, depth 1, tier, effective scope", async () => {
    const head = f.app.engine.head().position;
    const r = await approve(proposed.approval_message_id as number);
    assert.equal(r.action, 'added');
    assert.deepEqual(r.reactions, [{ reaction: 'approve', by: 'owner' }]);

    child = agentNamed('doc-writer')!;
    assert.ok(child, 'the agent exists');
    assert.match(child.configHash, /^[0-9a-f]{64}$/);
    assert.equal(
      child.configHash,
      configHash({
        model: spec.model,
        system_prompt: spec.system_prompt,
        tool_scope: spec.tool_scope,
        skills: spec.skills,
        mcp_servers: spec.mcp_servers,
        subagents: spec.subagents,
      }),
      'the hash of the proposed config',
    );
    assert.equal(child.parentId, leadAgent.agentId, 'parent = the proposer');
    assert.equal(child.spawnDepth, 1);
    assert.equal(child.tier, 'assisted');
    assert.ok(
      TIERS.indexOf(child.tier) <= TIERS.indexOf(getAgent(f.app.engine.db, leadAgent.agentId)!.tier),
      "tier ≤ the proposer's",
    );
    assert.deepEqual(
      child.toolScope,
      ['get_channel_messages', 'read_inbox', 'whoami'],
      'the effective (sorted) tool scope',
    );
    assert.deepEqual(
      [child.model, child.systemPrompt, child.skills, child.subagents],
      [spec.model, spec.system_prompt, spec.skills, spec.subagents],
    );
    assert.deepEqual(child.mcpServers, spec.mcp_servers);
    assert.equal(child.ownerId, f.owner.userId);

    const p = getProposal(f.app.engine.db, proposed.proposal_id as number)!;
    assert.deepEqual([p.status, p.agentId, p.decidedBy], ['approved', child.agentId, 'owner']);
    const events = eventsAfter(head);
    assert.equal(new Set(events.map((e) => e.meta.commandId)).size, 1, 'one command: all or nothing');
    const types = events.map((e) => e.type);
    for (const t of ['ReactionAdded', 'AgentRegistered', 'TokenIssued', 'ProposalApproved', 'EvidenceRecorded'])
      assert.ok(types.includes(t), `${t} in ${types.join()}`);
    const approved = events.find((e) => e.type === 'ProposalApproved')!.data as { agentId?: number; auto: boolean };
    assert.deepEqual([approved.agentId, approved.auto], [child.agentId, false]);
    assert.equal(
      getTask(f.app.engine.db, goal.taskId)!.status,
      'approved',
      'the linked task is not claimed by the approval',
    );

    spawnedTokens.set('doc-writer', tokenOf(child.agentId));
  });

  it("a seeded reputation row at 70 % of the parent's score (root parent 0.5 → 0.35 in default, ±1 %)", () => {
    const parent = reputationOf(f.app, getAgent(f.app.engine.db, leadAgent.agentId)!);
    assert.deepEqual(
      parent.domains.map((d) => d.domain),
      ['default'],
    );
    assert.ok(Math.abs(parent.rollingScore - 0.5) < 0.005, `the root parent starts at 0.5, got ${parent.rollingScore}`);
    const rep = reputationOf(f.app, child);
    assert.equal(rep.configHash, child.configHash);
    assert.deepEqual(
      rep.domains.map((d) => [d.domain, d.evidenceCount]),
      [['default', 1]],
      'one seed row',
    );
    const score = rep.domains[0]!.score;
    assert.ok(Math.abs(score - 0.35) <= 0.35 * 0.01, `0.7 × 0.5 = 0.35 ± 1 %, got ${score}`);
    const seed = f.app.engine.db
      .prepare('SELECT ref, config_hash AS hash, agent_id AS agentId FROM evidence WHERE config_hash = ?')
      .all(child.configHash) as { ref: string; hash: string; agentId: number }[];
    assert.deepEqual(seed, [
      {
        ref: `seed_from_parent:${getAgent(f.app.engine.db, leadAgent.agentId)!.configHash}`,
        hash: child.configHash,
        agentId: child.agentId,
      },
    ]);
  });

  it("the proposer is DMed the agent's name and id — and no token", async () => {
    const dms = (await inboxOf(lead)).filter(
      (m) =>
        m.from === 'system' &&
        m.metadata?.event === 'ProposalApproved' &&
        m.metadata?.proposal_id === proposed.proposal_id,
    );
    assert.equal(dms.length, 1, 'one DM');
    const dm = dms[0]!;
    assert.match(dm.body, /"doc-writer"/);
    assert.match(dm.body, new RegExp(`id ${child.agentId}\\b`));
    assert.equal(dm.metadata?.agent_id, child.agentId);
    assert.equal(dm.metadata?.name, 'doc-writer');
    const token = spawnedTokens.get('doc-writer')!;
    assert.ok(!JSON.stringify(dm).includes(token), 'the token is not in the DM');
    assert.doesNotMatch(JSON.stringify(dm), /colony_/, 'nor anything shaped like a token');
  });

  it("`colony agents token NAME --json` on the same data dir reveals the same token (the owner's way to it)", () => {
    const r = colony(['agents', 'token', 'doc-writer', '--data', f.dataDir, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as Body;
    assert.deepEqual(Object.keys(out).sort(), ['id', 'name', 'token']);
    assert.deepEqual([out.id, out.name, out.token], [child.agentId, 'doc-writer', spawnedTokens.get('doc-writer')]);
  });

  it("the spawned agent's token works at once inside its scope and fails outside it (ErrToolNotInScope)", async () => {
    const client = await f.connect(spawnedTokens.get('doc-writer')!);
    const me = await ok(client, 'whoami');
    assert.deepEqual(
      [me.kind, me.id, me.name, me.tool_scope],
      ['agent', child.agentId, 'doc-writer', ['get_channel_messages', 'read_inbox', 'whoami']],
    );
    assert.ok(Array.isArray((await ok(client, 'get_channel_messages', { channel_name: 'approvals' })).messages));
    await ok(client, 'read_inbox');
    await refusal(f, client, 'send_message', { channel: 'approvals', body: 'hello' }, 'ErrToolNotInScope');
    await refusal(f, client, 'propose_agent', proposal(goal, 'grandchild'), 'ErrToolNotInScope');
    await refusal(f, client, 'claim_task', { task_id: goal.taskId }, 'ErrToolNotInScope');
  });

  it("a second agent with the same config continues that config's record: no second seed row (reputation is keyed by config hash)", async () => {
    const before = reputationOf(f.app, child);
    const p = await ok(lead, 'propose_agent', {
      goal_id: goal.goalId,
      parent_task_id: goal.taskId,
      ...spec,
      name: 'doc-writer-two',
    });
    await approve(p.approval_message_id as number);
    const twin = agentNamed('doc-writer-two')!;
    assert.equal(twin.configHash, child.configHash, 'name and tier are not part of the hash');
    const after = reputationOf(f.app, twin);
    assert.equal(after.evidenceCount, before.evidenceCount, 'no extra seed row for a config that already has evidence');
    assert.ok(
      Math.abs(after.rollingScore - before.rollingScore) < 0.001,
      `the score is not inflated: ${before.rollingScore} → ${after.rollingScore}`,
    );
    spawnedTokens.set('doc-writer-two', tokenOf(twin.agentId));
  });

  it('…and so does a second root agent with the same config (one bootstrap row per config hash)', () => {
    const config = {
      systemPrompt: 'You are one of two identical root agents.',
      toolScope: ['whoami'],
      tier: 'supervised' as const,
    };
    const first = getAgent(f.app.engine.db, f.addAgent('root-one', config).agentId)!;
    const second = getAgent(f.app.engine.db, f.addAgent('root-two', config).agentId)!;
    assert.equal(second.configHash, first.configHash);
    const rep = reputationOf(f.app, second);
    assert.equal(rep.evidenceCount, 1, 'one seed row, not two');
    assert.ok(Math.abs(rep.rollingScore - 0.5) < 0.005, `still 0.5, not 1.0: ${rep.rollingScore}`);
  });

  it('a parent with evidence in several domains seeds the child at 70 % in each of them', async () => {
    const multi = await proposer('multi-domain', 'assisted');
    const parent = getAgent(f.app.engine.db, multi.agentId)!;
    recordEvidence(f.app, parent, 'docs', 0.2, 'test:docs', { actor: 'system' });
    const parentScores = new Map(reputationOf(f.app, parent).domains.map((d) => [d.domain, d.score]));
    assert.ok(Math.abs(parentScores.get('docs')! - 0.7) < 0.005, 'docs: seed 0.5 + 0.2');
    const p = await ok(multi.client, 'propose_agent', proposal(goal, 'multi-child'));
    await approve(p.approval_message_id as number);
    const spawned = agentNamed('multi-child')!;
    const seeded = reputationOf(f.app, spawned).domains;
    assert.deepEqual(
      seeded.map((d) => d.domain),
      ['default', 'docs'],
    );
    for (const d of seeded) {
      const expected = 0.7 * parentScores.get(d.domain)!;
      assert.ok(Math.abs(d.score - expected) <= expected * 0.01, `${d.domain}: ${d.score} vs ${expected}`);
    }
    spawnedTokens.set('multi-child', tokenOf(spawned.agentId));
  });
});

describe("the owner's reject", () => {
  it('creates no agent, DMs the proposer the reason and leaves the linked task approved and unassigned', async () => {
    const goal = await goalWithTask();
    const p = await ok(lead, 'propose_agent', proposal(goal, 'doc-reviewer'));
    const head = f.app.engine.head().position;
    const r = await ok(owner, 'react', {
      message_id: p.approval_message_id as number,
      reaction: 'reject',
      metadata: '{"reason":"We already have a reviewer for this module"}',
    });
    assert.deepEqual(r.reactions, [{ reaction: 'reject', by: 'owner' }]);
    assert.equal(agentNamed('doc-reviewer'), null, 'no agent');
    const types = eventsAfter(head).map((e) => e.type);
    assert.ok(types.includes('ProposalRejected'));
    assert.ok(
      !types.some((t) => t === 'AgentRegistered' || t === 'TokenIssued' || t === 'EvidenceRecorded'),
      types.join(),
    );
    const row = getProposal(f.app.engine.db, p.proposal_id as number)!;
    assert.deepEqual(
      [row.status, row.reason, row.agentId],
      ['rejected', 'We already have a reviewer for this module', null],
    );

    const dm = (await inboxOf(lead)).find(
      (m) =>
        m.from === 'system' && m.metadata?.event === 'ProposalRejected' && m.metadata?.proposal_id === p.proposal_id,
    );
    assert.ok(dm, 'the proposer was DMed');
    assert.match(dm.body, /We already have a reviewer for this module/);
    assert.match(dm.body, /doc-reviewer/);

    const task = getTask(f.app.engine.db, goal.taskId)!;
    assert.deepEqual([task.status, task.assigneeAgentId, task.assigneeName], ['approved', null, null]);
    const head2 = f.app.engine.head().position;
    await ok(owner, 'react', { message_id: p.approval_message_id as number, reaction: 'approve' });
    assert.equal(agentNamed('doc-reviewer'), null, 'a decided proposal is not decided again');
    assert.ok(!eventsAfter(head2).some((e) => e.type === 'AgentRegistered' || e.type === 'ProposalApproved'));
  });
});

describe('spawn depth (refused iff depth + 1 > max)', () => {
  let goal: { goalId: number; taskId: number };
  let depthTwo: { client: Client; agentId: number };

  before(async () => {
    goal = await goalWithTask({ max_spawn_depth: 3 });
    depthTwo = await proposer('depth-two', 'assisted', 2, leadAgent.agentId);
  });

  it('a depth-2 proposer at max 3 may spawn: the child is at depth 3', async () => {
    const p = await ok(
      depthTwo.client,
      'propose_agent',
      proposal(goal, 'depth-three', { tool_scope: ['propose_agent', 'whoami'] }),
    );
    await approve(p.approval_message_id as number);
    const child = agentNamed('depth-three')!;
    assert.ok(child);
    assert.deepEqual([child.spawnDepth, child.parentId], [3, depthTwo.agentId]);
    spawnedTokens.set('depth-three', tokenOf(child.agentId));
  });

  it('a depth-3 proposer at max 3 gets ErrSpawnDepthExceeded: nothing appended, no approval message', async () => {
    const before = (await approvals()).length;
    const client = await f.connect(spawnedTokens.get('depth-three')!);
    const { details } = await refusal(
      f,
      client,
      'propose_agent',
      proposal(goal, 'depth-four', { tool_scope: ['whoami'] }),
      'ErrSpawnDepthExceeded',
    );
    assert.deepEqual([details.spawn_depth, details.max_spawn_depth], [4, 3]);
    assert.deepEqual(details.violations, ['spawn depth 4 exceeds max 3']);
    assert.equal((await approvals()).length, before, 'no approval message');
    assert.equal(agentNamed('depth-four'), null);
  });

  it("the goal's own max counts: at max 1 a depth-0 agent may spawn, a depth-1 agent may not", async () => {
    const shallow = await goalWithTask({ max_spawn_depth: 1 });
    const p = await ok(lead, 'propose_agent', proposal(shallow, 'shallow-child'));
    assert.equal(p.status, 'pending');
    const depthOne = await proposer('depth-one', 'assisted', 1, leadAgent.agentId);
    await refusal(f, depthOne.client, 'propose_agent', proposal(shallow, 'too-deep'), 'ErrSpawnDepthExceeded');
    const deeper = await goalWithTask({ max_spawn_depth: 2 });
    assert.equal((await ok(depthOne.client, 'propose_agent', proposal(deeper, 'just-deep-enough'))).status, 'pending');
  });
});

describe('the delegation cap through propose_agent (a child holds no tool its parent lacks)', () => {
  let goal: { goalId: number; taskId: number };
  const parents = new Map<Tier, Client>();

  before(async () => {
    goal = await goalWithTask();
    for (const tier of TIERS) parents.set(tier, (await proposer(`parent-${tier}`, tier)).client);
  });

  for (const parentTier of TIERS) {
    for (const childTier of TIERS) {
      const allowed = TIERS.indexOf(childTier) <= TIERS.indexOf(parentTier);
      it(`${parentTier} → ${childTier}: ${allowed ? 'allowed' : 'ErrDelegationCapExceeded'}`, async () => {
        const client = parents.get(parentTier)!;
        const name = `tier-${parentTier.slice(0, 3)}-${childTier.slice(0, 3)}`;
        const args = proposal(goal, name, { autonomy_tier: childTier });
        if (!allowed) {
          const before = (await approvals()).length;
          const { details } = await refusal(f, client, 'propose_agent', args, 'ErrDelegationCapExceeded');
          assert.deepEqual(details.violations, [`autonomy tier "${childTier}" exceeds parent tier "${parentTier}"`]);
          assert.equal((await approvals()).length, before, 'no proposal message');
          return;
        }
        const p = await ok(client, 'propose_agent', args);
        assert.equal(p.status, 'pending');
        await approve(p.approval_message_id as number);
        const child = agentNamed(name)!;
        assert.ok(child, `${name} was created`);
        assert.equal(child.tier, childTier);
        spawnedTokens.set(name, tokenOf(child.agentId));
      });
    }
  }

  // SynapBus's case names `attachments:write`, which is no Colony tool (refused as unknown, below): a real tool the parent lacks stands in.
  it("a tool outside the parent's scope is refused before the owner sees it (claim_task stands for attachments:write)", async () => {
    const before = (await approvals()).length;
    const { details } = await refusal(
      f,
      lead,
      'propose_agent',
      proposal(goal, 'attacher', { tool_scope: ['whoami', 'claim_task'] }),
      'ErrDelegationCapExceeded',
    );
    assert.deepEqual(details.violations, ['tool "claim_task" not in parent scope']);
    assert.equal((await approvals()).length, before);
  });

  it('several violations are all listed in a stable order: tier, then tools sorted', async () => {
    const sup = parents.get('supervised')!;
    const { details } = await refusal(
      f,
      sup,
      'propose_agent',
      proposal(goal, 'greedy', {
        autonomy_tier: 'autonomous',
        tool_scope: ['verify_task', 'whoami', 'claim_task', 'react'],
      }),
      'ErrDelegationCapExceeded',
    );
    assert.deepEqual(details.violations, [
      'autonomy tier "autonomous" exceeds parent tier "supervised"',
      'tool "claim_task" not in parent scope',
      'tool "react" not in parent scope',
      'tool "verify_task" not in parent scope',
    ]);
  });

  it('…and with the depth as well (tier, tools sorted, depth), reported as ErrSpawnDepthExceeded', async () => {
    const deep = await proposer('deep-supervised', 'supervised', 3, leadAgent.agentId);
    const { details } = await refusal(
      f,
      deep.client,
      'propose_agent',
      proposal(goal, 'greedy-deep', { autonomy_tier: 'assisted', tool_scope: ['verify_task', 'claim_task'] }),
      'ErrSpawnDepthExceeded',
    );
    assert.deepEqual(details.violations, [
      'autonomy tier "assisted" exceeds parent tier "supervised"',
      'tool "claim_task" not in parent scope',
      'tool "verify_task" not in parent scope',
      'spawn depth 4 exceeds max 3',
    ]);
  });
});

describe('names and the race on spawn', () => {
  let goal: { goalId: number; taskId: number };
  before(async () => {
    goal = await goalWithTask();
  });

  it("ErrAgentNameTaken at proposal for an existing agent's name (a root agent, a spawned one)", async () => {
    const before = (await approvals()).length;
    await refusal(f, lead, 'propose_agent', proposal(goal, 'lead'), 'ErrAgentNameTaken');
    await refusal(f, lead, 'propose_agent', proposal(goal, 'worker'), 'ErrAgentNameTaken');
    await refusal(f, lead, 'propose_agent', proposal(goal, 'doc-writer'), 'ErrAgentNameTaken');
    assert.equal((await approvals()).length, before);
  });

  it("another owner's agent name is free", async () => {
    const other = f.addOwner('other-owner');
    f.addAgent('foreign-name', { ownerId: other.userId });
    const p = await ok(lead, 'propose_agent', proposal(goal, 'foreign-name'));
    await approve(p.approval_message_id as number);
    const mine = agentNamed('foreign-name')!;
    assert.equal(mine.ownerId, f.owner.userId);
    spawnedTokens.set('foreign-name', tokenOf(mine.agentId));
  });

  it('two same-name proposals both go to approval; the first approval wins, the second fails with ErrAgentNameTaken and stays pending', async () => {
    const first = await ok(
      lead,
      'propose_agent',
      proposal(goal, 'twin', { reason: 'First alternative: a terse writer.' }),
    );
    const second = await ok(
      lead,
      'propose_agent',
      proposal(goal, 'twin', {
        reason: 'Second alternative: a verbose writer.',
        system_prompt: `${PROMPT} Explain everything at length.`,
      }),
    );
    assert.notEqual(first.proposal_id, second.proposal_id);
    const both = (await approvals()).filter(
      (m) => m.metadata?.kind === 'agent_proposal' && m.metadata?.name === 'twin',
    );
    assert.equal(both.length, 2, 'the owner sees both alternatives');

    await approve(first.approval_message_id as number);
    const twin = agentNamed('twin')!;
    assert.equal(getProposal(f.app.engine.db, first.proposal_id as number)!.agentId, twin.agentId);
    spawnedTokens.set('twin', tokenOf(twin.agentId));

    await refusal(
      f,
      owner,
      'react',
      { message_id: second.approval_message_id as number, reaction: 'approve' },
      'ErrAgentNameTaken',
    );
    const row = getProposal(f.app.engine.db, second.proposal_id as number)!;
    assert.deepEqual([row.status, row.agentId], ['pending', null]);
    const msg = (await approvals()).find((m) => m.message_id === second.approval_message_id)!;
    assert.deepEqual(msg.reactions, [], 'the refused reaction was not kept');
    assert.equal(agentNamed('twin')!.agentId, twin.agentId, 'the first twin is untouched');

    await ok(owner, 'react', {
      message_id: second.approval_message_id as number,
      reaction: 'reject',
      metadata: '{"reason":"The first one got the name"}',
    });
    assert.equal(
      getProposal(f.app.engine.db, second.proposal_id as number)!.status,
      'rejected',
      'the owner can still reject it',
    );
  });
});

describe('approval_mode auto', () => {
  it('an autonomous proposer: propose_agent returns status approved with the agent id; ProposalApproved is recorded by system', async () => {
    const goal = await goalWithTask({ approval_mode: 'auto' });
    const boss = await proposer('auto-boss', 'autonomous');
    const head = f.app.engine.head().position;
    const p = await ok(boss.client, 'propose_agent', proposal(goal, 'auto-child', { autonomy_tier: 'assisted' }));
    assert.equal(p.status, 'approved');
    const child = agentNamed('auto-child')!;
    assert.ok(child);
    assert.equal(p.agent_id, child.agentId);
    assert.deepEqual([child.parentId, child.spawnDepth, child.tier], [boss.agentId, 1, 'assisted']);
    const approved = eventsAfter(head).find((e) => e.type === 'ProposalApproved')!;
    assert.ok(approved);
    assert.equal(approved.meta.actor, 'system');
    const data = approved.data as { by: { name: string }; auto: boolean; agentId: number };
    assert.deepEqual([data.by.name, data.auto, data.agentId], ['system', true, child.agentId]);
    assert.equal(getProposal(f.app.engine.db, p.proposal_id as number)!.status, 'approved');
    const rep = reputationOf(f.app, child);
    assert.ok(Math.abs(rep.rollingScore - 0.35) <= 0.0035, `seeded in auto mode too: ${rep.rollingScore}`);
    const dm = (await inboxOf(boss.client)).find(
      (m) => m.metadata?.event === 'ProposalApproved' && m.metadata?.agent_id === child.agentId,
    );
    assert.ok(dm, 'the proposer is DMed in auto mode too');
    spawnedTokens.set('auto-child', tokenOf(child.agentId));
  });

  it("an assisted proposer's spawn waits for the owner even in auto mode (autonomy tiers)", async () => {
    const goal = await goalWithTask({ approval_mode: 'auto' });
    const p = await ok(lead, 'propose_agent', proposal(goal, 'waiting-child', { autonomy_tier: 'supervised' }));
    assert.deepEqual([p.status, p.agent_id, agentNamed('waiting-child')], ['pending', null, null]);
    await approve(p.approval_message_id as number);
    assert.equal(agentNamed('waiting-child')?.parentId, leadAgent.agentId);
  });

  it('the caps still apply in auto mode: nothing is appended for a refused proposal', async () => {
    const goal = await goalWithTask({ approval_mode: 'auto' });
    await refusal(
      f,
      lead,
      'propose_agent',
      proposal(goal, 'auto-greedy', { autonomy_tier: 'autonomous' }),
      'ErrDelegationCapExceeded',
    );
    assert.equal(agentNamed('auto-greedy'), null);
  });
});

describe('who may propose, and for which task', () => {
  let goal: { goalId: number; taskId: number };
  let other: { goalId: number; taskId: number };
  before(async () => {
    goal = await goalWithTask();
    other = await goalWithTask();
  });

  it('an owner calling propose_agent → ErrForbidden, nothing appended', async () => {
    await refusal(f, owner, 'propose_agent', proposal(goal, 'owner-child'), 'ErrForbidden');
  });

  it('a parent_task_id of another goal → ErrTaskNotFound; an unknown task or goal too', async () => {
    await refusal(
      f,
      lead,
      'propose_agent',
      proposal(goal, 'cross-goal', { parent_task_id: other.taskId }),
      'ErrTaskNotFound',
    );
    await refusal(f, lead, 'propose_agent', proposal(goal, 'no-task', { parent_task_id: 999_999 }), 'ErrTaskNotFound');
    await refusal(
      f,
      lead,
      'propose_agent',
      proposal({ goalId: 999_999, taskId: goal.taskId }, 'no-goal'),
      'ErrGoalNotFound',
    );
  });

  it("an agent of another owner cannot propose for this owner's goal (ErrGoalNotFound)", async () => {
    const stranger = f.addOwner('stranger-owner');
    const outsider = await f.connect(
      f.addAgent('outsider', { ownerId: stranger.userId, toolScope: PROPOSER_TOOLS, tier: 'autonomous' }).token,
    );
    await refusal(f, outsider, 'propose_agent', proposal(goal, 'smuggled'), 'ErrGoalNotFound');
  });

  it('a tool that does not exist is bad input, named with the closest agent tool, before the cap or the depth', async () => {
    const before = (await approvals()).length;
    const typo = await refusal(
      f,
      lead,
      'propose_agent',
      proposal(goal, 'typist', { tool_scope: ['whoami', 'read_inbx'] }),
      'ErrInvalidInput',
    );
    assert.equal(typo.text, 'ErrInvalidInput: unknown tool read_inbx: did you mean read_inbox?');
    assert.deepEqual(
      [typo.details.unknown_tools, typo.details.suggestions],
      [['read_inbx'], { read_inbx: 'read_inbox' }],
    );
    const deep = await proposer('deep-typist', 'supervised', 3, leadAgent.agentId);
    const first = await refusal(
      f,
      deep.client,
      'propose_agent',
      proposal(goal, 'too-deep', { tool_scope: ['attachments:write'] }),
      'ErrInvalidInput',
    );
    assert.equal(first.text, 'ErrInvalidInput: unknown tool attachments:write', 'no suggestion when nothing is close');
    const ownerTool = await refusal(
      f,
      lead,
      'propose_agent',
      proposal(goal, 'usurper', { tool_scope: ['whoami', 'update_agent'] }),
      'ErrInvalidInput',
    );
    assert.equal(ownerTool.text, 'ErrInvalidInput: update_agent is an owner tool: agents cannot call it');
    assert.equal((await approvals()).length, before, 'no proposal reached #approvals');
  });

  it('an agent without propose_agent in its scope → ErrToolNotInScope', async () => {
    const narrow = await f.connect(f.addAgent('narrow', { toolScope: ['whoami'] }).token);
    await refusal(f, narrow, 'propose_agent', proposal(goal, 'narrow-child'), 'ErrToolNotInScope');
  });

  const bad: [string, Body][] = [
    ['name with an underscore', { name: 'bad_name' }],
    ['name with an upper-case letter', { name: 'Writer' }],
    ['name starting with a digit', { name: '1writer' }],
    ['name shorter than 3', { name: 'ab' }],
    ['name longer than 64', { name: `a${'b'.repeat(64)}` }],
    ['system_prompt shorter than 20', { system_prompt: 'Too short a prompt' }],
    ['system_prompt longer than 16000', { system_prompt: 'x'.repeat(16_001) }],
    ['empty tool_scope', { tool_scope: [] }],
    ['tool_scope not an array', { tool_scope: 'whoami' }],
    ['a misspelt tool in tool_scope', { tool_scope: ['whoami', 'get_channel_mesages'] }],
    ['an owner tool in tool_scope', { tool_scope: ['whoami', 'list_tokens'] }],
    ['unknown tier', { autonomy_tier: 'godlike' }],
    ['reason shorter than 10', { reason: 'because' }],
    ['an unknown key', { budget_tokens: 100 }],
    ['mcp_servers item without url', { mcp_servers: [{ name: 'fs', transport: 'stdio' }] }],
    [
      'mcp_servers item with an unknown key',
      { mcp_servers: [{ name: 'fs', url: 'http://x', transport: 'stdio', token: 'x' }] },
    ],
    ['empty model', { model: '' }],
    ['goal_id not an integer', { goal_id: 'one' }],
    ['parent_task_id missing', { parent_task_id: undefined }],
  ];
  for (const [what, override] of bad) {
    it(`bad input: ${what} → ErrInvalidInput, nothing appended`, async () => {
      const args = proposal(goal, 'valid-name', override);
      for (const k of Object.keys(args)) if (args[k] === undefined) delete args[k];
      await refusal(f, lead, 'propose_agent', args, 'ErrInvalidInput');
    });
  }
  it('the same base arguments are valid (so each case above failed for its one reason)', async () => {
    assert.equal((await ok(lead, 'propose_agent', proposal(goal, 'valid-name'))).status, 'pending');
  });
});

describe("no spawned agent's token ever leaks", () => {
  it('not in any MCP result, any message, nor in the bytes of any file of the data dir', async () => {
    assert.ok(spawnedTokens.size >= 8, `collected ${spawnedTokens.size} tokens`);
    const everything = transcript.join('\n');
    const messages = f.app.engine.db.prepare('SELECT * FROM messages').all();
    assert.ok(messages.length > 0);
    const messageText = JSON.stringify(messages);
    f.app.engine.db.pragma('wal_checkpoint(PASSIVE)');
    const files = dataDirBytes(f.dataDir);
    const names = files.map((x) => x.file.slice(f.dataDir.length + 1));
    assert.ok(names.includes('colony.db'), names.join());
    for (const [name, token] of spawnedTokens) {
      assert.match(token, /^colony_/);
      assert.ok(!everything.includes(token), `${name}'s token is in an MCP result`);
      assert.ok(!messageText.includes(token), `${name}'s token is in a message`);
      for (const { file, bytes } of files) assert.equal(bytes.indexOf(token), -1, `${name}'s token is in ${file}`);
    }
  });
});
