import { createHash, randomBytes } from 'node:crypto';
import { updateAgent } from '../../src/actions/agents.js';
import { markRead, sendDirect, sendToChannel, toggleReaction, type Message } from '../../src/actions/channels.js';
import { closeGoal } from '../../src/actions/goal-close.js';
import { createGoal, resumeGoal, setApprovalMode } from '../../src/actions/goals.js';
import { setEvidenceRule } from '../../src/actions/goal-evidence.js';
import { decideAuthorization, issueGrant, refreshGrant, revokeGrant } from '../../src/actions/oauth.js';
import {
  createOwner,
  createToken,
  registerAgent,
  revokeToken,
  rotateToken,
  setAgentCommand,
  speakerOf,
} from '../../src/actions/principals.js';
import { createProbe, fireProbe, updateProbe } from '../../src/actions/probes.js';
import { archiveProject, createProject } from '../../src/actions/projects.js';
import { createProjectTask, dispatchTask, updateProjectTask } from '../../src/actions/projects/tasks.js';
import { setTaskBlockers } from '../../src/actions/tasks/blockers.js';
import { decideProposal, proposeTaskTree, reactTo } from '../../src/actions/proposals.js';
import { proposeAgent } from '../../src/actions/agents/spawning.js';
import { unquarantineAgent } from '../../src/actions/reputation.js';
import { rejectRequest, requestResource } from '../../src/actions/resources.js';
import {
  cancelRun,
  finishRun,
  recordSessionMessage,
  requestRun,
  startQueuedRun,
  type RunOutcome,
} from '../../src/actions/runs.js';
import {
  configureRuntime,
  configureSandbox,
  setAgentProject,
  startAgent,
  stopAgent,
} from '../../src/actions/runs/agent-controls.js';
import { launchRun, timeOutRun } from '../../src/actions/runs/launch.js';
import { revokeSecret, setSecret } from '../../src/actions/secrets.js';
import { buildSecretEnv } from '../../src/actions/secrets/env.js';
import {
  cancelTask,
  claimTask,
  completeTask,
  expireLeases,
  releaseTask,
  reportUsage,
  startTask,
  verifyTask,
} from '../../src/actions/tasks.js';
import { addRecipe, removeRecipe } from '../../src/actions/verifiers.js';
import { presentWebapp } from '../../src/actions/webapps.js';
import type { App } from '../../src/app.js';
import type { Clock } from '../../src/clock.js';
import { probeDecider } from '../../src/commands/probes.js';
import type { CommandOptions } from '../../src/engine/handle.js';
import type { Speaker } from '../../src/events/principals.js';
import { probeStream } from '../../src/events/probes.js';
import { configureBreakers, resumeAgent, tripBreaker } from '../../src/actions/breakers.js';
import type { TreeRequest } from '../../src/events/proposals.js';
import type { SandboxProfile } from '../../src/events/sandbox.js';
import { tokensOf } from '../../src/projections/principal-queries.js';
import { getProbe } from '../../src/projections/probes.js';

/** What the tour made, for a test that looks further at it. */
export interface TourIds {
  ownerId: number;
  agents: Record<'worker' | 'reviewer' | 'coordinator' | 'scout', number>;
  goals: { main: number; side: number };
}

type AdvancingClock = Clock & { advance(ms: number): void };

const MIN = 60_000;

/**
 * A domain tour: one owner, a few agents and two goals driven through the real actions (the functions
 * the MCP tools, the CLI and the runtime call) until the log holds at least one event of every type the
 * read models handle — channels with @mentions, quotes and unicode, goals through approval, budget alert,
 * pause, resume and close, task trees with every task step, spawning, reputation and quarantine,
 * resources and secrets, runs and their sessions, projects, project tasks, web apps, probes, verifier
 * recipes and OAuth. It exists so that read models can be compared across stores and against a rebuild
 * on a log that exercises every `apply` case (test/projections/domain-tour.test.ts).
 *
 * `app` must be fresh (no principals yet) and opened on a real data dir (projects create their directory
 * under `<dataDir>/workspace`), with `clock` as its engine's clock — the tour advances it to run a lease
 * out, then expires it with the lease sweeper's command:
 *
 *   const clock = fixedClock('2026-03-01T09:00:00.000Z', 1000);
 *   const app = openApp({ dataDir: mkdtempSync(join(tmpdir(), 'colony-tour-')), durability: 'normal', clock });
 *   domainTour(app, clock);
 *
 * No process is started: a run's start, launch, transcript, timeout and end are recorded with the
 * actions the runtime calls (as test/helpers/resource-world.ts does). About 0.3 s.
 *
 * One event goes through the engine rather than an action: ProbeBurned. A probe is burned only when its
 * agent no longer exists or its stored message no longer validates, and neither can happen to a probe
 * made today (agents are never deleted; the message was validated when it was stored), so the tour sends
 * the probe decider its BurnProbe command directly, as test/commands/probes.test.ts does.
 */
export function domainTour(app: App, clock: AdvancingClock): TourIds {
  const t = new Tour(app, clock);
  t.principals();
  const reply = t.channels();
  const goals = t.goals();
  t.runs(goals.timeoutTask, reply);
  t.resources(goals.firstLeaf);
  t.budgets(goals.main, goals.root);
  t.projects();
  t.probes();
  t.verifiers();
  t.oauth();
  t.breakers(goals.main, goals.side);
  return { ownerId: t.ownerId, agents: t.agents, goals: { main: goals.main, side: goals.side } };
}

const msg = (body: string, extra: Partial<Message> = {}): Message => ({
  body,
  subject: null,
  priority: 5,
  metadata: null,
  replyTo: null,
  ...extra,
});

const SANDBOX_OFF: SandboxProfile = {
  mode: 'off',
  optOut: 'serve',
  network: 'host',
  limits: { memoryMb: 1024, cpuSec: 300, pids: 256, fileMb: 256 },
  enforcement: { memory: 'none', pids: 'none', cpu: 'rlimit', fileSize: 'rlimit' },
};

const ran = (extra: Partial<RunOutcome> = {}): RunOutcome => ({
  status: 'succeeded',
  exitCode: 0,
  signal: null,
  durationMs: 1200,
  tokensIn: 300,
  tokensOut: 120,
  costCents: 0,
  outputTail: 'done: "parsed" 3 files — naïve résumé ✓',
  agentText: null,
  ...extra,
});

class Tour {
  ownerId = 0;
  agents = { worker: 0, reviewer: 0, coordinator: 0, scout: 0 };
  private readonly asOwner: CommandOptions = { actor: 'user:owner' };
  private readonly system: CommandOptions = { actor: 'system' };

  constructor(
    private readonly app: App,
    private readonly clock: AdvancingClock,
  ) {}

  private owner(): Speaker {
    return speakerOf(this.app, `user-${this.ownerId}`);
  }
  private agent(name: keyof Tour['agents']): Speaker {
    return speakerOf(this.app, `agent-${this.agents[name]}`);
  }
  private as(name: string): CommandOptions {
    return { actor: `agent:${name}` };
  }

  /** The owner, two root agents with tokens issued, rotated and revoked, a config change, runtime settings. */
  principals(): void {
    const { app } = this;
    this.ownerId = createOwner(app, 'owner', this.system).userId;
    for (const name of ['worker', 'reviewer'] as const) {
      this.agents[name] = registerAgent(
        app,
        {
          name,
          ownerId: this.ownerId,
          model: 'test-model',
          systemPrompt: `You are ${name}. Say "done" when you're done — merci, 谢谢 🙏.`,
          toolScope: ['claim_task', 'complete_task', 'report_usage', 'send_message', 'verify_task', 'whoami'],
          tier: 'supervised',
          command: null,
          parentId: null,
          spawnDepth: 0,
        },
        this.asOwner,
      ).agentId;
    }
    const { worker, reviewer } = this.agents;
    createToken(app, 'agent', worker, "worker's CI token", ['mcp'], this.asOwner);
    const extra = tokensOf(app.engine.db, 'agent', worker).find((x) => x.label === "worker's CI token")!;
    revokeToken(app, 'agent', worker, extra.tokenId, 'leaked in a "paste"', this.asOwner);
    rotateToken(app, 'agent', reviewer, this.asOwner);
    updateAgent(app, this.ownerId, worker, { model: 'test-model-2', tier: 'assisted' }, this.asOwner);
    for (const id of [worker, reviewer])
      configureRuntime(app, this.ownerId, id, { cooldownSec: 0, timeoutSec: 600 }, 'owner', this.asOwner);
    configureSandbox(
      app,
      this.ownerId,
      worker,
      { network: 'allow', allowHosts: ['example.com'] },
      'owner',
      this.asOwner,
    );
    setAgentCommand(app, this.ownerId, 'sh -c \'echo "hello"\'', this.asOwner);
  }

  /** Posts with @mentions, quotes and unicode, a DM thread, reactions set and toggled off, read markers. */
  channels(): number {
    const { app } = this;
    const [owner, worker, reviewer] = [this.owner(), this.agent('worker'), this.agent('reviewer')];
    const req = sendToChannel(
      app,
      owner,
      { name: '#requests' },
      msg(`@worker and @reviewer: the "naïve" parser's café test — 漢字 and emoji 🚀🎉 isn't 'done' yet`, {
        subject: 'Parser "v2" — état',
        priority: 8,
        metadata: { kind: 'note', tags: ['é', '漢字'] },
      }),
      this.asOwner,
    );
    const dm = sendDirect(
      app,
      worker,
      'reviewer',
      msg('Can you look at \'parser.ts\'? It says "ok" ✅'),
      this.as('worker'),
    );
    const reply = sendDirect(
      app,
      reviewer,
      'worker',
      msg('On it — ça marche 👍', { replyTo: dm.messageId }),
      this.as('reviewer'),
    );
    sendDirect(app, worker, 'owner', msg('Status: 2/3 done; résumé follows 📄'), this.as('worker'));
    toggleReaction(app, worker, req.messageId, 'in_progress', null, this.as('worker'));
    toggleReaction(app, reviewer, req.messageId, 'done', { note: 'fini ✓' }, this.as('reviewer'));
    toggleReaction(app, reviewer, req.messageId, 'done', null, this.as('reviewer'));
    markRead(app, reviewer, new Map([[dm.channelId, dm.messageId]]), this.as('reviewer'));
    markRead(app, worker, new Map([[req.channelId, req.messageId]]), this.as('worker'));
    return reply.messageId;
  }

  /**
   * The main goal: a rejected tree, then an approved one whose leaves see every task step (auto and peer
   * verdicts, release, lease expiry, cancellation; one waits on others), a spawn proposal approved; a side goal switched to
   * auto approval and cancelled.
   */
  goals(): { main: number; side: number; root: number; firstLeaf: number; timeoutTask: number } {
    const { app } = this;
    const owner = this.owner();
    const newGoal = {
      title: 'Ship the "naïve" parser — 漢字 🚀',
      description: "Ship the parser: it's café-ready when 'make test' passes.",
      budgets: { tokens: null, cents: 1000 },
      maxSpawnDepth: 2,
      coordinatorConfig: 'default',
      approvalMode: 'human' as const,
      // Done only with evidence (the default), with no retries: a rejection fails its task, as the quarantine needs.
      maxRejections: 0,
    };
    const main = createGoal(app, owner, newGoal, this.asOwner);
    this.agents.coordinator = main.coordinatorAgentId;
    const coordinator = this.agent('coordinator');
    const asCoordinator = this.as('coordinator');
    const first = proposeTaskTree(app, coordinator, main.goalId, 'One step.', this.tree(false), asCoordinator);
    reactTo(app, owner, first.proposalMessageId, 'reject', { reason: 'Too coarse — split it ✂️' }, this.asOwner);
    const second = proposeTaskTree(app, coordinator, main.goalId, 'Split "per step".', this.tree(true), asCoordinator);
    const approved = reactTo(app, owner, second.proposalMessageId, 'approve', null, this.asOwner);
    const [root, auto, peer, release, expire, timeoutTask, cancel, quarantine] = approved.decided!.taskIds as number[];
    setTaskBlockers(app, owner, cancel!, [quarantine!, release!], this.asOwner);
    this.spawn(main.goalId, auto!);
    this.taskSteps({ auto: auto!, peer: peer!, release: release!, expire: expire!, cancel: cancel! });
    this.quarantine(quarantine!);
    const side = createGoal(app, owner, { ...newGoal, title: 'Side quest: "tidy" the docs ✨' }, this.asOwner);
    setApprovalMode(app, owner, side.goalId, 'auto', this.asOwner);
    setEvidenceRule(app, owner, side.goalId, { requireEvidence: false, maxRejections: 3 }, this.asOwner);
    closeGoal(app, owner, side.goalId, 'cancelled', "Not needed — it's covered by the main goal.", this.asOwner);
    return { main: main.goalId, side: side.goalId, root: root!, firstLeaf: auto!, timeoutTask: timeoutTask! };
  }

  private tree(split: boolean): TreeRequest {
    if (!split) return { title: 'Do everything', description: 'All of the parser work in one task.' };
    const leaf = (title: string, extra: Partial<TreeRequest> = {}): TreeRequest => ({
      title,
      description: `${title}: the "whole" of it, l'été 2026 ☀️.`,
      acceptance_criteria: 'Tests pass; résumé written.',
      billing_code: 'parser',
      ...extra,
    });
    return {
      title: 'Parser v2 — 漢字',
      description: 'The parser, split into steps that can each be verified.',
      children: [
        leaf('Write the tokenizer', { budget_dollars_cents: 100 }),
        leaf('Review the grammar', { verifier_config: { kind: 'peer', agent_id: this.agents.reviewer } }),
        leaf('Port the "legacy" tests'),
        leaf('Benchmark the parser'),
        leaf('Fuzz the parser'),
        leaf('Write the old XML adapter', { blocked_by_nodes: ['tree.children[6]'] }),
        leaf('Review the error messages', { verifier_config: { kind: 'peer', agent_id: this.agents.reviewer } }),
      ],
    };
  }

  /** The coordinator proposes a specialist for a task; the owner approves, which creates it. */
  private spawn(goalId: number, parentTaskId: number): void {
    const proposal = proposeAgent(
      this.app,
      this.agent('coordinator'),
      {
        goalId,
        parentTaskId,
        agent: {
          name: 'scout',
          model: 'test-model',
          systemPrompt: 'You scout the codebase and report what you find — "briefly".',
          toolScope: ['claim_task', 'complete_task', 'report_usage'],
          skills: [],
          mcpServers: [],
          subagents: [],
          tier: 'supervised',
        },
        reason: 'Someone has to read the legacy code 🔍',
      },
      this.as('coordinator'),
    );
    const decided = decideProposal(this.app, this.owner(), proposal.proposalId, 'approve', '', this.asOwner);
    this.agents.scout = decided.proposal.agentId!;
  }

  private taskSteps(ids: { auto: number; peer: number; release: number; expire: number; cancel: number }): void {
    const { app } = this;
    const [worker, reviewer, owner] = [this.agent('worker'), this.agent('reviewer'), this.owner()];
    const w = this.as('worker');
    // A leaf with its own budget: 85 of its 100 cents raise its one alert.
    claimTask(app, worker, ids.auto, w);
    startTask(app, worker, ids.auto, w);
    reportUsage(app, worker, ids.auto, 2000, 85, 'tokenizer: "first pass" ✓', w);
    completeTask(app, worker, ids.auto, 'Tokenizer done — handles 漢字 and emoji 🎉', [], w);
    // The goal requires evidence: an auto-verified leaf is done by the owner's verdict.
    verifyTask(
      app,
      owner,
      ids.auto,
      'approve',
      'Read it — "looks right"',
      { kind: 'owner', ownerId: this.ownerId },
      this.asOwner,
    );
    claimTask(app, worker, ids.peer, w);
    completeTask(app, worker, ids.peer, "Grammar reviewed; it's fine.", [], w);
    verifyTask(
      app,
      reviewer,
      ids.peer,
      'reject',
      'Missing the "else" branch',
      { kind: 'peer', agentId: this.agents.reviewer },
      this.as('reviewer'),
    );
    claimTask(app, worker, ids.release, w);
    releaseTask(app, worker, ids.release, "Can't reach the 'legacy' repo", w);
    // A short lease runs out; the sweeper's command expires it.
    claimTask(app, worker, ids.expire, w, 5 * MIN);
    this.clock.advance(10 * MIN);
    expireLeases(app);
    cancelTask(app, owner, ids.cancel, 'XML is out of scope — non, merci', this.asOwner);
  }

  /**
   * A second rejected verdict brings the worker's mean score under the threshold: it is quarantined in
   * the verdict's command, and the owner lifts the quarantine.
   */
  private quarantine(taskId: number): void {
    const { app } = this;
    const [worker, reviewer] = [this.agent('worker'), this.agent('reviewer')];
    claimTask(app, worker, taskId, this.as('worker'));
    completeTask(app, worker, taskId, 'Error messages now say "what" and "why".', [], this.as('worker'));
    const as = { kind: 'peer' as const, agentId: this.agents.reviewer };
    verifyTask(app, reviewer, taskId, 'reject', "They still don't say where", as, this.as('reviewer'));
    unquarantineAgent(app, this.ownerId, this.agents.worker, 'owner', this.asOwner);
  }

  /**
   * Runs as the runtime records them, without a process: a manual run with a second wake-up merged into
   * it, launched, its transcript and its end; a task's run that times out (the task times out with it);
   * a queued run cancelled.
   */
  runs(timeoutTask: number, wakingMessage: number): void {
    const { app } = this;
    const { worker, reviewer } = this.agents;
    const by = `user-${this.ownerId}`;
    const manual = requestRun(app, { agentId: worker, source: 'manual', prompt: 'Summarise "today" ☕', by });
    requestRun(app, {
      agentId: worker,
      source: 'message_received',
      messageIds: [wakingMessage],
      by: `agent-${reviewer}`,
    });
    startQueuedRun(app, manual.run.runId);
    launchRun(app, manual.run.runId, SANDBOX_OFF);
    recordSessionMessage(app, manual.run.runId, 'agent', 'Reading the inbox… 3 messages, one with 漢字');
    finishRun(app, manual.run.runId, ran({ agentText: 'Summary: all "green" ✅' }));

    claimTask(app, this.agent('worker'), timeoutTask, this.as('worker'));
    const slow = requestRun(app, { agentId: worker, source: 'task_assignment', taskId: timeoutTask, by: 'system' });
    startQueuedRun(app, slow.run.runId);
    launchRun(app, slow.run.runId, SANDBOX_OFF);
    this.clock.advance(MIN);
    timeOutRun(app, slow.run.runId, 600);
    finishRun(app, slow.run.runId, ran({ status: 'timed_out', exitCode: null, signal: 'SIGTERM', outputTail: '' }));

    const queued = requestRun(app, { agentId: reviewer, source: 'manual', prompt: 'Review later', by });
    cancelRun(app, queued.run.runId, by, this.asOwner);
  }

  /** A resource request fulfilled by a secret, another rejected; a secret handed to a process, then revoked. */
  resources(taskId: number): void {
    const { app } = this;
    const [worker, owner] = [this.agent('worker'), this.owner()];
    requestResource(
      app,
      worker,
      { name: 'GITHUB_TOKEN', resourceType: 'api_key', reason: 'To push the "parser" branch 🔑', taskId },
      this.as('worker'),
    );
    const refused = requestResource(
      app,
      worker,
      { name: 'PROD_DB_URL', resourceType: 'url', reason: 'For a quick look', taskId },
      this.as('worker'),
    );
    rejectRequest(app, owner, refused.requestId, "No prod access — use the 'staging' copy", this.asOwner);
    const set = setSecret(
      app,
      owner,
      { name: 'GITHUB_TOKEN', value: 'ghp_é漢字🔑"x"', scope: 'agent:worker' },
      this.asOwner,
    );
    setSecret(app, owner, { name: 'NPM_TOKEN', value: 'npm_1', scope: 'user:owner' }, this.asOwner);
    setSecret(app, owner, { name: 'NPM_TOKEN', value: 'npm_2', scope: 'user:owner' }, this.asOwner);
    buildSecretEnv(app, { ownerId: this.ownerId, agentId: this.agents.worker, taskId, purpose: 'agent_run' });
    revokeSecret(app, owner, { secretId: set.secretId }, this.asOwner);
  }

  /** Spend on the root task: the goal's 80 % alert, its pause at 100 %, and the owner resuming it with more. */
  budgets(goalId: number, root: number): void {
    const { app } = this;
    const owner = this.owner();
    reportUsage(app, owner, root, 0, 720, 'Hosting for the "demo" 💸', this.asOwner);
    reportUsage(app, owner, root, 0, 300, 'CI minutes', this.asOwner);
    resumeGoal(app, owner, goalId, { cents: 5000 }, this.asOwner);
  }

  /**
   * A project with a task created, edited and dispatched; the owner presents a port app of the worker set
   * to it twice; the worker is stopped (the app is retired, its probes expire) and started again; the project archived and back.
   */
  projects(): void {
    const { app } = this;
    const owner = this.owner();
    const input = { name: 'parser', path: '', gitUrl: 'https://example.com/parser.git', description: '' };
    createProject(app, owner, input, this.asOwner);
    const task = createProjectTask(
      app,
      owner,
      {
        title: 'Fix the "é" bug',
        project: 'parser',
        description: 'Unicode — 漢字 — breaks the lexer 🐛',
        model: 'claude-sonnet-4-6',
        effort: 'low',
        priority: 1,
        cwd: null,
      },
      this.asOwner,
    ).task;
    updateProjectTask(
      app,
      owner,
      task.taskId,
      { title: 'Fix the "é" and 漢字 bug', description: '', project: '', model: '', effort: 'high', priority: 2 },
      this.asOwner,
    );
    dispatchTask(app, owner, task.taskId, this.asOwner);
    setAgentProject(app, this.ownerId, this.agents.worker, 'parser', 'owner', this.asOwner);
    const present = {
      target: '5173',
      title: 'Parser playground 🛝',
      description: 'Try "any" input',
      kind: '',
      agentId: '',
    };
    // The owner presents the port for the worker: confined in a network of its own (allow), the worker may not.
    presentWebapp(app, owner, { ...present, agentId: 'worker' }, this.asOwner);
    presentWebapp(app, owner, { ...present, agentId: 'worker', title: 'Parser playground v2' }, this.asOwner);
    createProbe(app, owner, { agentId: 'worker', message: 'Wake up ⏰', expiresInHours: 24 }, this.asOwner);
    stopAgent(app, this.ownerId, this.agents.worker, 'owner', "Pausing for the 'weekend'", this.asOwner);
    // A stopped agent's wake-up is refused at its first gate.
    requestRun(app, { agentId: this.agents.worker, source: 'manual', prompt: 'Wake up', by: `user-${this.ownerId}` });
    startAgent(app, this.ownerId, this.agents.worker, 'owner', this.asOwner);
    archiveProject(app, owner, 'parser', this.asOwner);
    createProject(app, owner, { ...input, description: 'Back — l\'analyseur "v2"' }, this.asOwner);
  }

  /** A probe updated and fired, one cancelled by an update to the past, one burned (see domainTour). */
  probes(): void {
    const { app } = this;
    const owner = this.owner();
    const message = 'CI finished: "green" ✅ — 漢字';
    const fired = createProbe(app, owner, { agentId: 'worker', message, expiresInHours: 24 }, this.asOwner);
    const later = new Date(this.clock().getTime() + 48 * 3_600_000).toISOString();
    updateProbe(app, owner, fired.probe.probeId, later, this.asOwner);
    fireProbe(app, fired.token);
    const cancelled = createProbe(app, owner, { agentId: 'reviewer', message, expiresInHours: 1 }, this.asOwner);
    updateProbe(
      app,
      owner,
      cancelled.probe.probeId,
      new Date(this.clock().getTime() - MIN).toISOString(),
      this.asOwner,
    );
    const burned = createProbe(app, owner, { agentId: 'reviewer', message, expiresInHours: 1 }, this.asOwner);
    const n = getProbe(app.engine.db, burned.probe.probeId)!.n;
    app.engine.handle(
      probeDecider,
      probeStream(n),
      { type: 'BurnProbe', reason: 'agent_missing', detail: `agent ${this.agents.reviewer} no longer exists` },
      { actor: `probe:${burned.probe.probeId}` },
    );
  }

  /** A recipe added, removed and added again (a recipe is immutable: a change is a new one). */
  verifiers(): void {
    const { app } = this;
    const owner = this.owner();
    const recipe = {
      name: 'unit-tests',
      command: `npm test -- --grep 'parser "v2"'`,
      cwd: null,
      writable: false,
      timeoutSec: null,
    };
    addRecipe(app, owner, { ...recipe, secrets: ['NPM_TOKEN'] }, this.asOwner);
    removeRecipe(app, owner, 'unit-tests', this.asOwner);
    addRecipe(app, owner, { ...recipe, timeoutSec: 120, secrets: [] }, this.asOwner);
  }

  /** An authorization approved (as the worker) and one denied; the approved code redeemed, refreshed, revoked. */
  oauth(): void {
    const { app } = this;
    const decidedBy = { kind: 'user' as const, id: this.ownerId };
    const principal = { kind: 'agent' as const, id: this.agents.worker, ownerId: this.ownerId };
    const { approvalN } = decideAuthorization(
      app,
      { decision: 'approve', userCode: 'ABCD-EFGH', via: 'cli', decidedBy, principal },
      this.asOwner,
    );
    decideAuthorization(
      app,
      { decision: 'deny', userCode: 'WXYZ-2345', via: 'console', decidedBy, principal: null },
      this.asOwner,
    );
    // The code itself lives in the serving process's memory (http/oauth-token.ts): what it says reaches
    // issueGrant as facts, with the PKCE verifier the client presents.
    const verifier = randomBytes(32).toString('base64url');
    const client = {
      clientId: 'tour-client-1',
      kind: 'dcr' as const,
      clientName: 'Tour "Desktop" — é 漢字',
      redirectUris: ['http://127.0.0.1:53682/callback'],
    };
    const resource = 'http://127.0.0.1:7070/mcp';
    const issued = issueGrant(
      app,
      client,
      {
        clientId: client.clientId,
        clientName: client.clientName,
        redirectUri: client.redirectUris[0]!,
        codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
        expiresAt: new Date(this.clock().getTime() + 10 * MIN).toISOString(),
        resource,
        scopes: ['mcp'],
        principal,
        approvalN,
      },
      { clientId: client.clientId, redirectUri: client.redirectUris[0]!, codeVerifier: verifier, resource: null },
    );
    refreshGrant(app, issued.refreshToken, client.clientId, resource);
    revokeGrant(app, issued.grantN, 'owner', this.asOwner);
  }
  /** Thresholds set, a breaker tripped (twice: the second writes nothing) and lifted, another left open. */
  breakers(main: number, side: number): void {
    const { app } = this;
    configureBreakers(
      app,
      this.ownerId,
      this.agents.worker,
      { maxRunsWithoutProgress: 3, maxWakesPerHour: 0 },
      this.asOwner,
    );
    const trip = {
      agentId: this.agents.worker,
      goalId: main,
      breaker: 'no_progress' as const,
      reason: '3 runs in a row on goal "main" ended without a claim — <b>naïve</b>',
      evidence: { runIds: [1], threshold: 3 },
    };
    tripBreaker(app, trip);
    tripBreaker(app, trip);
    resumeAgent(app, this.ownerId, this.agents.worker, main, this.asOwner);
    tripBreaker(app, { ...trip, agentId: this.agents.scout, goalId: side, breaker: 'wake_depth' });
  }
}
