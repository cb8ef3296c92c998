import { updateAgent } from '../../src/actions/agents.js';
import { sendToChannel } from '../../src/actions/channels.js';
import { closeGoal } from '../../src/actions/goal-close.js';
import { createGoal } from '../../src/actions/goals.js';
import { proposeTaskTree } from '../../src/actions/proposals.js';
import { finishRun, requestRun, startQueuedRun } from '../../src/actions/runs.js';
import { proposeAgent } from '../../src/actions/agents/spawning.js';
import { claimTask, completeTask, reportUsage, verifyTask } from '../../src/actions/tasks.js';
import type { App } from '../../src/app.js';
import type { TreeRequest } from '../../src/events/proposals.js';
import { addRecipe } from '../../src/actions/verifiers.js';
import { tasksOfGoal } from '../../src/projections/task-queries.js';
import { runDecider } from '../../src/commands/runs.js';
import { runStream } from '../../src/events/runs.js';
import type { SandboxProfile } from '../../src/events/sandbox.js';
import { type Speaker } from '../../src/events/principals.js';
import { type CommandOptions } from '../../src/engine/handle.js';

/**
 * A finished doc-gardener-like goal built through the real actions, in auto-approve mode: the default
 * coordinator proposes a tree of four tasks and two specialists; they claim, run (one run each, with
 * usage), report usage, post an artifact and complete; a command verifier approves one task and rejects
 * another; the owner closes the goal, and a late wake-up is refused by the goal_closed gate.
 * Titles, bodies and prompts carry markup, quotes and ampersands, for the escaping checks.
 */
export const EVIL = '<script>alert(1)</script>';
export const GOAL_TITLE = `Docs & "flags" ${EVIL}`;
export const GOAL_DESCRIPTION = `Keep the CLI docs accurate <b>now</b> & always; see https://docs.example.com/cli for 'the' pages.`;
export const SCANNER_PROMPT = `You scan the README for documented flags ${EVIL} & "quote" them exactly. ${'Be precise and brief about every flag you find. '.repeat(6)}`;
export const ARTIFACT_BODY = `Findings ${EVIL}\n- --data is documented & real\n- <img src="https://evil.example/x.png"> is not a flag`;
export const SUMMARY = `All flags checked ${EVIL} & "reported"`;

export interface BuiltGoal {
  goalId: number;
  coordinatorId: number;
  scannerId: number;
  verifierId: number;
  taskIds: { root: number; scan: number; extract: number; diff: number };
  artifactId: number;
  runIds: number[];
}

const TREE: TreeRequest = {
  title: 'Keep CLI docs accurate',
  description: 'The root of the doc-gardening work.',
  billing_code: 'docs',
  children: [
    {
      title: `scan-docs ${EVIL}`,
      description: 'Read the README and list every documented flag.',
      billing_code: 'docs',
    },
    {
      title: 'extract-source-flags',
      description: 'Run colony <cmd> --help and list the real flags.',
      billing_code: 'source',
      verifier_config: { kind: 'command', recipe: 'flags-listed' },
    },
    {
      title: 'diff-and-report',
      description: 'Compare the two lists and report the gaps.',
      billing_code: 'report',
      verifier_config: { kind: 'command', recipe: 'gaps-closed' },
    },
  ],
};

const specialist = (name: string, prompt: string) => ({
  name,
  model: 'scripted',
  systemPrompt: prompt,
  toolScope: ['get_channel_messages', 'my_status', 'read_inbox', 'send_message'],
  skills: [],
  mcpServers: [],
  subagents: [],
  tier: 'assisted' as const,
});

export function buildReportGoal(app: App, ownerId: number, ownerName = 'owner'): BuiltGoal {
  const actor: CommandOptions = { actor: `user:${ownerName}` };
  const owner: Speaker = { key: `user-${ownerId}`, name: ownerName, tenant: ownerId };
  const goal = createGoal(
    app,
    owner,
    {
      title: GOAL_TITLE,
      description: GOAL_DESCRIPTION,
      budgets: { tokens: 100_000, cents: 500 },
      maxSpawnDepth: 3,
      coordinatorConfig: 'default',
      approvalMode: 'auto',
      // The story this report tells: a rejection fails its task, and the goal is closed with it failed.
      requireEvidence: false,
      maxRejections: 0,
    },
    actor,
  );
  const coord: Speaker = { key: `agent-${goal.coordinatorAgentId}`, name: 'coordinator', tenant: ownerId };
  // Autonomous, so that its spawns are approved at once in this auto goal (an assisted agent's wait for the owner).
  updateAgent(app, ownerId, goal.coordinatorAgentId, { tier: 'autonomous' }, actor);
  for (const [name, command] of [
    ['flags-listed', 'true'],
    ['gaps-closed', 'false'],
  ] as const)
    addRecipe(app, owner, { name, command, cwd: null, writable: false, timeoutSec: null, secrets: [] }, actor);
  proposeTaskTree(app, coord, goal.goalId, 'Scan, extract, then diff & report.', TREE, { actor: 'agent:coordinator' });
  const [root, scan, extract, diff] = tasksOfGoal(app.engine.db, goal.goalId).map((t) => t.taskId) as [
    number,
    number,
    number,
    number,
  ];
  const spawn = (name: string, prompt: string, taskId: number): number =>
    proposeAgent(
      app,
      coord,
      { goalId: goal.goalId, parentTaskId: taskId, agent: specialist(name, prompt), reason: `${name} does ${taskId}.` },
      { actor: 'agent:coordinator' },
    ).agentId!;
  const scannerId = spawn('docs-scanner', SCANNER_PROMPT, scan);
  const verifierId = spawn('cli-verifier', 'You run colony --help for every command and list its real flags.', extract);
  for (const id of [scannerId, verifierId]) updateAgent(app, ownerId, id, { command: 'true' }, actor);

  const as = (id: number, name: string): Speaker => ({ key: `agent-${id}`, name, tenant: ownerId });
  const scanner = as(scannerId, 'docs-scanner');
  const verifier = as(verifierId, 'cli-verifier');
  const runIds = [workOn(app, scanner, scan, 1500, 400, 250, 7), workOn(app, verifier, extract, 2300, 900, 600, 12)];
  const artifact = sendToChannel(
    app,
    scanner,
    { id: goal.channelId },
    { body: ARTIFACT_BODY, subject: `Flags found ${EVIL}`, priority: 5, metadata: { kind: 'artifact' }, replyTo: null },
    { actor: 'agent:docs-scanner' },
  );
  reportUsage(app, scanner, scan, 1200, 30, 'reading the README', { actor: 'agent:docs-scanner' });
  completeTask(app, scanner, scan, `Found 12 flags ${EVIL}`, [artifact.messageId], { actor: 'agent:docs-scanner' });
  reportUsage(app, verifier, extract, 800, 20, null, { actor: 'agent:cli-verifier' });
  completeTask(app, verifier, extract, 'Listed the real flags.', [], { actor: 'agent:cli-verifier' });
  const system: Speaker = { key: 'system', name: 'system', tenant: ownerId };
  verifyTask(
    app,
    system,
    extract,
    'approve',
    'command exited 0',
    { kind: 'command', exitCode: 0, output: 'ok' },
    { actor: 'system' },
  );
  claimTask(app, verifier, diff, { actor: 'agent:cli-verifier' });
  reportUsage(app, verifier, diff, 300, 5, 'diffing', { actor: 'agent:cli-verifier' });
  completeTask(app, verifier, diff, 'Three gaps.', [], { actor: 'agent:cli-verifier' });
  verifyTask(
    app,
    system,
    diff,
    'reject',
    `exit 1: 2 gaps left & "unfixed" ${EVIL}`,
    { kind: 'command', exitCode: 1, output: 'gap' },
    { actor: 'system' },
  );
  closeGoal(app, owner, goal.goalId, 'completed', SUMMARY, actor);
  const refused = requestRun(app, { agentId: scannerId, source: 'manual', goalId: goal.goalId, by: `user-${ownerId}` });
  return {
    goalId: goal.goalId,
    coordinatorId: goal.coordinatorAgentId,
    scannerId,
    verifierId,
    taskIds: { root, scan, extract, diff },
    artifactId: artifact.messageId,
    runIds: [...runIds, refused.run.runId],
  };
}

/** Claims the task and runs the agent on it once: queued, started (claimed → in_progress), finished with its usage. */
/** The profile a confined run records (confine.ts): what the report shows for each run. */
export const SANDBOX: SandboxProfile = {
  mode: 'bwrap',
  network: 'allow',
  allowHosts: ['api.anthropic.com'],
  limits: { memoryMb: 2048, cpuSec: 900, pids: 512, fileMb: 1024 },
  enforcement: { memory: 'cgroup', pids: 'cgroup', cpu: 'rlimit', fileSize: 'rlimit' },
};

function workOn(
  app: App,
  agent: Speaker,
  taskId: number,
  durationMs: number,
  tokensIn: number,
  tokensOut: number,
  costCents: number,
): number {
  claimTask(app, agent, taskId, { actor: `agent:${agent.name}` });
  const { run } = requestRun(app, {
    agentId: Number(agent.key.slice('agent-'.length)),
    source: 'task_assignment',
    taskId,
    by: 'system',
  });
  if (!startQueuedRun(app, run.runId))
    throw new Error(`run ${run.runId} did not start: ${run.status} ${run.reason ?? ''}`);
  app.engine.handle(runDecider, runStream(run.runId), { type: 'LaunchRun', sandbox: SANDBOX }, { actor: 'system' });
  finishRun(app, run.runId, {
    status: 'succeeded',
    exitCode: 0,
    signal: null,
    durationMs,
    tokensIn,
    tokensOut,
    costCents,
    outputTail: `done ${EVIL}`,
    agentText: `Worked on task ${taskId} & done ${EVIL}`,
  });
  return run.runId;
}
