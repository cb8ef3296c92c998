import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  proposalDecider,
  type ApproveProposal,
  type ProposalCommand,
  type ProposeAgent,
  type ProposeTree,
  type SpawnFacts,
  type TreeFacts,
} from '../../src/commands/proposals.js';
import { MAX_TREE_DEPTH } from '../../src/commands/proposal-tree.js';
import type { GoalStatus } from '../../src/events/goals.js';
import type {
  AgentProposed,
  AgentSpec,
  ProposalEvent,
  TaskTreeProposed,
  TreeNode,
  TreeRequest,
} from '../../src/events/proposals.js';
import { spec } from '../helpers/decider-spec.js';

/**
 * The proposal decider, given/when/then: who may propose a goal's task tree and what a tree must be
 * (its depth, its verifiers, its budgets, its card), who may propose a spawn and within which caps, and
 * who decides a proposal, once. Every fact from another stream arrives in the command.
 */
const owner = { key: 'user-1', name: 'owner' };
const coordinator = { key: 'agent-2', name: 'coordinator' };
const worker = { key: 'agent-3', name: 'worker' };
const system = { key: 'system', name: 'system' };

const leaf = (title: string, extra: Partial<TreeRequest> = {}): TreeRequest => ({
  title,
  description: `${title}, described`,
  ...extra,
});

const facts = (extra: Partial<TreeFacts> = {}, goal: Partial<TreeFacts['goal']> = {}): TreeFacts => ({
  goal: {
    title: 'Keep docs fresh',
    status: 'draft',
    coordinatorAgentId: 2,
    budgets: { tokens: null, cents: 100 },
    ...goal,
  },
  spent: { tokens: 0, cents: 0 },
  heldByRoots: { tokens: 0, cents: 0 },
  pending: null,
  recipes: [],
  peers: [],
  blockers: [],
  ...extra,
});
const proposeTree = (
  proposer = coordinator,
  request: TreeRequest = leaf('Scan'),
  f: TreeFacts = facts(),
): ProposeTree => ({
  type: 'ProposeTree',
  proposal: { proposalId: 5, goalId: 7, ownerId: 1, proposer, reasoning: 'one step', messageId: 11, channelId: 4 },
  request,
  facts: f,
});
/** A tree as the proposal records it, spelled out by a spec (a request without command verifiers is recorded as it is). */
const asRecorded = (tree: object): TreeNode => tree as TreeNode;
const treeProposed = (proposer = coordinator, tree = asRecorded(leaf('Scan')), taskCount = 1): TaskTreeProposed => ({
  type: 'TaskTreeProposed',
  data: {
    proposalId: 5,
    goalId: 7,
    ownerId: 1,
    proposer,
    reasoning: 'one step',
    tree,
    taskCount,
    messageId: 11,
    channelId: 4,
  },
});

const writer: AgentSpec = {
  name: 'writer',
  model: 'm',
  systemPrompt: 'You write the docs.',
  toolScope: ['send_message'],
  skills: [],
  mcpServers: [],
  subagents: [],
  tier: 'supervised',
};
const spawn = (extra: Partial<SpawnFacts> = {}): SpawnFacts => ({
  parent: {
    agentId: 2,
    name: 'coordinator',
    tier: 'assisted',
    toolScope: ['send_message', 'claim_task'],
    spawnDepth: 0,
    ownCommand: null,
    ownRuntime: null,
  },
  maxSpawnDepth: 3,
  names: { ownerName: 'owner', taken: false },
  ...extra,
});
const agentProposed: AgentProposed = {
  type: 'AgentProposed',
  data: {
    proposalId: 5,
    goalId: 7,
    ownerId: 1,
    parentTaskId: 9,
    proposer: { ...coordinator, agentId: 2 },
    agent: writer,
    reason: 'a dedicated writer',
    messageId: 11,
    channelId: 4,
  },
};
const proposeAgent = (f: SpawnFacts = spawn(), agent = writer, goalStatus: GoalStatus = 'active'): ProposeAgent => ({
  type: 'ProposeAgent',
  proposal: { ...agentProposed.data, agent },
  goalStatus,
  spawn: f,
});

const approve = (by = owner, extra: Partial<ApproveProposal> = {}): ProposalCommand => ({
  type: 'ApproveProposal',
  by,
  auto: false,
  taskIds: [20],
  staleRecipes: [],
  ...extra,
});
const reject = (by = owner): ProposalCommand => ({ type: 'RejectProposal', by, reason: 'not now' });
const approved = (by = owner, extra: Record<string, unknown> = {}): ProposalEvent => ({
  type: 'ProposalApproved',
  data: { proposalId: 5, by, auto: false, taskIds: [20], ...extra },
});
const rejected: ProposalEvent = { type: 'ProposalRejected', data: { proposalId: 5, by: owner, reason: 'not now' } };

const proposal = spec(proposalDecider);

describe('ProposeTree: who proposes, on which goal', () => {
  it("the goal's coordinator or its owner proposes; anyone else is ErrNotCoordinator", () => {
    proposal
      .given([])
      .when(proposeTree(coordinator))
      .then([treeProposed(coordinator)]);
    proposal
      .given([])
      .when(proposeTree(owner))
      .then([treeProposed(owner)]);
    for (const other of [worker, system, { key: 'user-2', name: 'stranger' }]) {
      const e = proposal
        .given([])
        .when(proposeTree(other))
        .thenThrows('ErrNotCoordinator', "goal 7's coordinator or owner");
      assert.deepEqual(e.details, { goal_id: 7 });
    }
  });

  it('a completed or cancelled goal takes no tree (ErrGoalClosed); draft, active, paused and stuck ones do', () => {
    for (const status of ['completed', 'cancelled'] as const) {
      proposal
        .given([])
        .when(proposeTree(coordinator, leaf('Scan'), facts({}, { status })))
        .thenThrows('ErrGoalClosed', `goal 7 is ${status}`);
    }
    for (const status of ['draft', 'active', 'paused', 'stuck'] as const)
      proposal
        .given([])
        .when(proposeTree(coordinator, leaf('Scan'), facts({}, { status })))
        .then([treeProposed()]);
  });

  it('one proposal waits for the owner at a time (ErrProposalPending, naming it)', () => {
    const e = proposal
      .given([])
      .when(proposeTree(coordinator, leaf('Scan'), facts({ pending: { proposalId: 3, messageId: 8 } })))
      .thenThrows('ErrProposalPending', 'pending task-tree proposal \\(3\\)');
    assert.deepEqual(e.details, { goal_id: 7, proposal_id: 3, proposal_message_id: 8 });
  });

  it('the proposer is checked before the goal, the goal before the pending proposal', () => {
    const everything = facts({ pending: { proposalId: 3, messageId: 8 } }, { status: 'completed' });
    proposal
      .given([])
      .when(proposeTree(worker, leaf('Scan'), everything))
      .thenThrows('ErrNotCoordinator');
    proposal
      .given([])
      .when(proposeTree(owner, leaf('Scan'), everything))
      .thenThrows('ErrGoalClosed');
  });

  it('a proposal is made once (ErrProposalExists)', () => {
    proposal.given([treeProposed()]).when(proposeTree()).thenThrows('ErrProposalExists');
  });
});

describe('ProposeTree: the tree', () => {
  const nested = (levels: number): TreeRequest =>
    levels === 1 ? leaf(`level ${levels}`) : leaf(`level ${levels}`, { children: [nested(levels - 1)] });

  it(`is at most ${MAX_TREE_DEPTH} levels deep (ErrInvalidInput at the first node too deep)`, () => {
    proposal
      .given([])
      .when(proposeTree(owner, nested(MAX_TREE_DEPTH)))
      .then([treeProposed(owner, asRecorded(nested(MAX_TREE_DEPTH)), MAX_TREE_DEPTH)]);
    const e = proposal
      .given([])
      .when(proposeTree(owner, nested(MAX_TREE_DEPTH + 1)))
      .thenThrows('ErrInvalidInput', `at most ${MAX_TREE_DEPTH} levels deep`);
    assert.equal(e.details?.path, `tree${'.children[0]'.repeat(MAX_TREE_DEPTH)}`);
  });

  it("names as peer verifier only an agent of the goal's owner (else ErrNotFound)", () => {
    const peer = (agentId: number) => leaf('Scan', { verifier_config: { kind: 'peer', agent_id: agentId } });
    const theirs = { agentId: 8, name: 'theirs', ownerId: 2, inProposerLineage: false };
    for (const peers of [[], [theirs]]) {
      const e = proposal
        .given([])
        .when(proposeTree(coordinator, peer(8), facts({ peers })))
        .thenThrows('ErrNotFound', 'tree.verifier_config.agent_id: agent 8 not found');
      assert.deepEqual(e.details, { path: 'tree', agent_id: 8 });
    }
    const reviewer = { agentId: 6, name: 'reviewer', ownerId: 1, inProposerLineage: false };
    proposal
      .given([])
      .when(proposeTree(coordinator, peer(6), facts({ peers: [reviewer] })))
      .then([treeProposed(coordinator, asRecorded(peer(6)))]);
  });

  it('a peer verifier is independent of the proposer: not itself, not its spawn lineage (ErrSelfVerification)', () => {
    const peer = (agentId: number) => leaf('Scan', { verifier_config: { kind: 'peer', agent_id: agentId } });
    const self = { agentId: 2, name: 'coordinator', ownerId: 1, inProposerLineage: true };
    const child = { agentId: 6, name: 'child', ownerId: 1, inProposerLineage: true };
    proposal
      .given([])
      .when(proposeTree(coordinator, peer(2), facts({ peers: [self] })))
      .thenThrows('ErrSelfVerification', 'agent coordinator is the proposer itself');
    proposal
      .given([])
      .when(proposeTree(coordinator, peer(6), facts({ peers: [child] })))
      .thenThrows('ErrSelfVerification', "agent child is in the proposer's spawn lineage");
    // The owner is nobody's lineage: any agent of theirs may verify the owner's tree.
    proposal
      .given([])
      .when(proposeTree(owner, peer(6), facts({ peers: [child] })))
      .then([treeProposed(owner, asRecorded(peer(6)))]);
  });

  it("a command verifier names one of the owner's recipes and records its exact command line (else ErrVerifierNotFound)", () => {
    const command = leaf('Lint', { verifier_config: { kind: 'command', recipe: 'lint', cwd: '/work' } });
    const e = proposal
      .given([])
      .when(proposeTree(owner, command))
      .thenThrows('ErrVerifierNotFound', 'no verifier recipe named "lint"');
    assert.deepEqual(e.details, { path: 'tree', recipe: 'lint' });
    const recipes = [
      {
        recipeId: 4,
        name: 'lint',
        command: 'npm run lint',
        cwd: null,
        writable: false,
        timeoutSec: 90,
        secrets: ['NPM_TOKEN'],
      },
    ];
    const recorded = {
      ...command,
      verifier_config: {
        kind: 'command' as const,
        recipe: 'lint',
        recipeId: 4,
        cmd: 'npm run lint',
        timeout_sec: 90,
        cwd: '/work',
        secrets: ['NPM_TOKEN'],
      },
    };
    proposal
      .given([])
      .when(proposeTree(owner, command, facts({ recipes })))
      .then([treeProposed(owner, asRecorded(recorded))]);
  });

  it('problems are reported in depth-first order, the first one wins', () => {
    const tree = leaf('Root', {
      children: [
        leaf('A', { verifier_config: { kind: 'command', recipe: 'missing' } }),
        leaf('B', { verifier_config: { kind: 'peer', agent_id: 99 } }),
      ],
    });
    proposal.given([]).when(proposeTree(owner, tree)).thenThrows('ErrVerifierNotFound', 'tree.children\\[0\\]');
  });

  it("fits in what the goal's budgets leave: the budget minus what earlier roots hold or the goal spent, whichever is more", () => {
    const asks = (cents: number) => leaf('Scan', { budget_dollars_cents: cents });
    const held = facts({ heldByRoots: { tokens: 0, cents: 60 }, spent: { tokens: 0, cents: 30 } });
    const e = proposal
      .given([])
      .when(proposeTree(owner, asks(41), held))
      .thenThrows('ErrBudgetInsufficient');
    assert.deepEqual(e.details, { path: 'tree', field: 'budget_dollars_cents', requested: 41, remaining: 40 });
    proposal
      .given([])
      .when(proposeTree(owner, asks(40), held))
      .then([treeProposed(owner, asRecorded(asks(40)))]);
    const spent = facts({ heldByRoots: { tokens: 0, cents: 10 }, spent: { tokens: 0, cents: 70 } });
    proposal
      .given([])
      .when(proposeTree(owner, asks(31), spent))
      .thenThrows('ErrBudgetInsufficient');
  });

  it('shows every command line in full on its card, or is refused (ErrInvalidInput, field tree)', () => {
    const recipes = Array.from({ length: 5 }, (_, i) => ({
      recipeId: i + 1,
      name: `r${i}`,
      command: `${'x'.repeat(3990)} ${i}`,
      cwd: null,
      writable: false,
      timeoutSec: 60,
      secrets: [],
    }));
    const tree = leaf('Root', {
      children: recipes.map((r) => leaf(`by ${r.name}`, { verifier_config: { kind: 'command', recipe: r.name } })),
    });
    const e = proposal
      .given([])
      .when(proposeTree(owner, tree, facts({ recipes })))
      .thenThrows('ErrInvalidInput', 'too long to show in full on one approval card');
    assert.deepEqual(e.details, { field: 'tree' });
    const three = { ...tree, children: tree.children!.slice(0, 3) };
    const recorded = {
      ...three,
      children: recipes.slice(0, 3).map((r) => ({
        ...leaf(`by ${r.name}`),
        verifier_config: { kind: 'command', recipe: r.name, recipeId: r.recipeId, cmd: r.command, timeout_sec: 60 },
      })),
    };
    proposal
      .given([])
      .when(proposeTree(owner, three, facts({ recipes })))
      .then([treeProposed(owner, asRecorded(recorded), 4)]);
  });
});

describe('ProposeAgent: only agents propose agents, within their caps', () => {
  it('an agent within its grant proposes', () => {
    proposal.given([]).when(proposeAgent()).then([agentProposed]);
  });

  it('a proposer that is not an agent is ErrForbidden', () => {
    proposal
      .given([])
      .when(proposeAgent(spawn({ parent: null })))
      .thenThrows('ErrForbidden', 'only agents propose agents');
  });

  it('the tool scope names only agent tools that exist, when the registry is given (ErrInvalidInput first)', () => {
    const knownTools = new Map([
      ['send_message', 'agent'],
      ['claim_task', 'agent'],
    ] as const);
    const typo = { ...writer, toolScope: ['send_mesage'], tier: 'autonomous' as const };
    proposal
      .given([])
      .when(proposeAgent(spawn({ knownTools, maxSpawnDepth: 0 }), typo))
      .thenThrows('ErrInvalidInput', 'did you mean send_message');
  });

  it('the spawn depth is at most the goal maximum (ErrSpawnDepthExceeded, before the cap)', () => {
    const e = proposal
      .given([])
      .when(proposeAgent(spawn({ maxSpawnDepth: 0 }), { ...writer, tier: 'autonomous' }))
      .thenThrows('ErrSpawnDepthExceeded', "spawn depth 1 exceeds goal 7's max 0");
    assert.deepEqual(e.details, {
      violations: ['autonomy tier "autonomous" exceeds parent tier "assisted"', 'spawn depth 1 exceeds max 0'],
      spawn_depth: 1,
      max_spawn_depth: 0,
    });
  });

  it('the child never gets more than its parent (ErrDelegationCapExceeded, every violation)', () => {
    const e = proposal
      .given([])
      .when(proposeAgent(spawn(), { ...writer, tier: 'autonomous', toolScope: ['send_message', 'verify_task'] }))
      .thenThrows('ErrDelegationCapExceeded', "exceeds coordinator's own grant");
    assert.deepEqual(e.details, {
      violations: [
        'autonomy tier "autonomous" exceeds parent tier "assisted"',
        'tool "verify_task" not in parent scope',
      ],
    });
  });

  it("the name is free: not reserved, not the owner's, not another agent's (ErrAgentNameReserved, ErrAgentNameTaken)", () => {
    proposal
      .given([])
      .when(proposeAgent(spawn(), { ...writer, name: 'system' }))
      .thenThrows('ErrAgentNameReserved');
    proposal
      .given([])
      .when(proposeAgent(spawn(), { ...writer, name: 'owner' }))
      .thenThrows('ErrAgentNameReserved');
    proposal
      .given([])
      .when(proposeAgent(spawn({ names: { ownerName: 'ada', taken: false } }), { ...writer, name: 'ada' }))
      .thenThrows('ErrAgentNameReserved', "a person's name in this team");
    proposal
      .given([])
      .when(proposeAgent(spawn({ names: { ownerName: 'owner', taken: true } })))
      .thenThrows('ErrAgentNameTaken', 'an agent named writer already exists');
  });

  it('the caps are checked before the goal status', () => {
    proposal
      .given([])
      .when(proposeAgent(spawn({ names: { ownerName: 'owner', taken: true } }), writer, 'completed'))
      .thenThrows('ErrAgentNameTaken');
  });
});

describe('deciding a proposal', () => {
  it("the goal's owner approves or rejects it; anyone else is ErrForbidden", () => {
    proposal.given([treeProposed()]).when(approve()).then([approved()]);
    proposal.given([treeProposed()]).when(reject()).then([rejected]);
    for (const other of [coordinator, worker, system, { key: 'user-2', name: 'stranger' }]) {
      const e = proposal
        .given([treeProposed()])
        .when(approve(other))
        .thenThrows('ErrForbidden', "only the goal's owner");
      assert.deepEqual(e.details, { proposal_id: 5 });
      proposal.given([treeProposed()]).when(reject(other)).thenThrows('ErrForbidden');
    }
  });

  it('system approves for a goal in auto mode, and only then', () => {
    proposal
      .given([treeProposed()])
      .when(approve(system, { auto: true }))
      .then([approved(system, { auto: true })]);
    proposal
      .given([treeProposed()])
      .when(approve(system, { auto: false }))
      .thenThrows('ErrForbidden');
    proposal
      .given([treeProposed()])
      .when(approve(worker, { auto: true }))
      .thenThrows('ErrForbidden');
  });

  it('a proposal is decided once (ErrProposalDecided), after the decider is checked', () => {
    for (const decided of [approved(), rejected]) {
      const status = decided.type === 'ProposalApproved' ? 'approved' : 'rejected';
      for (const c of [approve(), reject()]) {
        const e = proposal
          .given([treeProposed(), decided])
          .when(c)
          .thenThrows('ErrProposalDecided', `already ${status}`);
        assert.deepEqual(e.details, { proposal_id: 5, status });
      }
      proposal.given([treeProposed(), decided]).when(approve(worker)).thenThrows('ErrForbidden');
    }
    proposal.given([]).when(approve()).thenThrows('ErrProposalNotFound');
  });

  it('a tree whose recipe went stale since the proposal is not approved (ErrVerifierNotFound, the first one)', () => {
    const staleRecipes = [
      { path: 'tree.children[1]', problem: 'its verifier recipe "lint" was removed on 2026-01-02' },
      { path: 'tree.children[2]', problem: 'its verifier recipe "test" does not exist' },
    ];
    const e = proposal
      .given([treeProposed()])
      .when(approve(owner, { staleRecipes }))
      .thenThrows(
        'ErrVerifierNotFound',
        'tree.children\\[1\\]: its verifier recipe "lint" was removed on 2026-01-02 — reject this proposal',
      );
    assert.deepEqual(e.details, { path: 'tree.children[1]' });
    proposal
      .given([treeProposed()])
      .when(approve(owner, { staleRecipes: [] }))
      .then([approved()]);
    // Left out, the rule would be skipped: a caller that forgot to look the recipes up is a bug, not an approval.
    const unchecked = { ...approve(owner), staleRecipes: undefined } as ProposalCommand;
    proposal
      .given([treeProposed()])
      .when(unchecked)
      .thenFailsAsBug(/stale recipes/);
  });

  it("a spawn's caps and name are checked again on approval; it records the new agent's id", () => {
    const ok = approve(owner, { taskIds: [], agentId: 12, spawn: spawn() });
    proposal
      .given([agentProposed])
      .when(ok)
      .then([approved(owner, { taskIds: [], agentId: 12 })]);
    proposal
      .given([agentProposed])
      .when(approve(owner, { taskIds: [], agentId: 12, spawn: spawn({ names: { ownerName: 'owner', taken: true } }) }))
      .thenThrows('ErrAgentNameTaken');
    proposal
      .given([agentProposed])
      .when(approve(owner, { taskIds: [], agentId: 12, spawn: spawn({ maxSpawnDepth: 0 }) }))
      .thenThrows('ErrSpawnDepthExceeded');
    proposal
      .given([agentProposed])
      .when(approve(owner, { taskIds: [], agentId: 12, spawn: spawn({ parent: null }) }))
      .thenThrows('ErrNotFound', 'the proposing agent coordinator no longer exists');
    // Without its facts the caps would go unchecked: a caller's bug, not an approval.
    proposal
      .given([agentProposed])
      .when(approve(owner, { taskIds: [], agentId: 12 }))
      .thenFailsAsBug(/spawn facts/);
  });

  it('an approved spawn is decided before its name is looked at again', () => {
    proposal
      .given([agentProposed, approved(owner, { taskIds: [], agentId: 12 })])
      .when(approve(owner, { taskIds: [], agentId: 13, spawn: spawn({ names: { ownerName: 'owner', taken: true } }) }))
      .thenThrows('ErrProposalDecided');
  });
});
