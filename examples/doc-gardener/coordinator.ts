import type { RunContext } from './shared.js';
import { sleep, type Colony } from './colony-client.js';
import { COORDINATOR, REPORT_RECIPE, REPORT_FILE, SCANNER, TASK, VERIFIER, type AssignmentMetadata } from './shared.js';
import { allTasks, CLOSED_GOAL, FINISHED_TASK, goalSnapshot, leavesOf, type GoalSnapshot } from './tasks.js';

/**
 * doc-coordinator: on goal_created it proposes the task tree, proposes its two specialists (within its
 * own scope and tier), assigns them their tasks by DM and posts the staffing to the goal channel. Woken
 * later (its specialists' DMs), it reviews the tree: once every leaf is done or failed it completes the
 * goal — "completed", or "stuck" with the reasons. It never does leaf work itself.
 */
const SPECIALIST_TOOLS = {
  [SCANNER]: ['whoami', 'get_goal', 'read_inbox', 'send_message', 'claim_task', 'complete_task', 'report_usage'],
  [VERIFIER]: [
    'whoami',
    'get_goal',
    'read_inbox',
    'send_message',
    'get_channel_messages',
    'search_messages',
    'claim_task',
    'complete_task',
    'report_usage',
  ],
};
const REVIEW_WAIT_MS = 30_000;

interface Message {
  message_id: number;
  from: string;
  metadata: Record<string, unknown> | null;
}

export async function coordinate(ctx: RunContext): Promise<string> {
  const { colony, env } = ctx;
  const { messages } = await colony.call<{ messages: Message[] }>('read_inbox', { mark_read: true, limit: 200 });
  const goalId =
    Number(env.COLONY_GOAL_ID ?? 0) ||
    goalOfMessages(messages) ||
    (await myActiveGoal(colony, env.COLONY_AGENT ?? COORDINATOR));
  if (!goalId) return 'no goal to coordinate';
  let snapshot = await goalSnapshot(colony, goalId);
  if (CLOSED_GOAL.has(snapshot.goal.status)) return `goal #${goalId} is already ${snapshot.goal.status}`;
  if (snapshot.tasks_tree.length === 0) {
    const proposed = await colony.call<{ status: string; proposal_id: number }>('propose_task_tree', {
      goal_id: goalId,
      reasoning: REASONING,
      tree: treeFor(snapshot),
    });
    if (proposed.status !== 'approved')
      return `proposed task tree #${proposed.proposal_id}; waiting for the owner's approval`;
    snapshot = await goalSnapshot(colony, goalId);
  }
  if (!(await staffed(colony, snapshot))) return staff(colony, snapshot);
  return review(colony, goalId);
}

const goalOfMessages = (messages: readonly Message[]): number =>
  Number(messages.map((m) => m.metadata?.goal_id).find((id) => typeof id === 'number') ?? 0);

async function myActiveGoal(colony: Colony, me: string): Promise<number> {
  const { goals } = await colony.call<{ goals: { id: number; coordinator: string }[] }>('list_goals', {
    status: 'active',
  });
  return goals.find((g) => g.coordinator === me)?.id ?? 0;
}

const REASONING =
  'Documentation drifts when flags change: list what docs/cli.md documents, ask the CLI what it really accepts, then compare. The scan and the extraction are independent; the diff needs both and writes a report a command verifier can check.';

function treeFor(s: GoalSnapshot) {
  return {
    title: s.goal.title,
    billing_code: 'coordination',
    description:
      'Compare the CLI documented in docs/cli.md with the CLI the code really has, and report every difference per command.',
    acceptance_criteria:
      'Every leaf is done (verified) or failed with a reason; the diff report lists the findings per command.',
    children: [
      {
        title: TASK.scan,
        billing_code: 'docs',
        description: 'Read docs/cli.md, section "## Commands", and list every documented command with its flags.',
        acceptance_criteria: 'An artifact in the goal channel with the documented commands and flags as JSON.',
      },
      {
        title: TASK.extract,
        billing_code: 'source',
        description:
          'Run `colony <command> --help` for every command and subcommand and list the options each really accepts.',
        acceptance_criteria: 'An artifact in the goal channel with the real commands and options as JSON.',
      },
      {
        title: TASK.diff,
        billing_code: 'report',
        description: `Compare documented and real flags per command and write the findings to ${REPORT_FILE} (Markdown) in your working directory.`,
        acceptance_criteria: `${REPORT_FILE} exists and starts with the report header; the findings are posted to the goal channel.`,
        verifier_config: { kind: 'command', recipe: REPORT_RECIPE },
      },
    ],
  };
}

/** Staffing is posted to the goal channel once; a later run sees it there (runs keep no state of their own). */
async function staffed(colony: Colony, s: GoalSnapshot): Promise<boolean> {
  const { messages } = await colony.call<{ messages: Message[] }>('get_channel_messages', {
    channel_name: s.goal.channel,
    limit: 200,
  });
  return messages.some((m) => m.metadata?.kind === 'staffing');
}

async function staff(colony: Colony, s: GoalSnapshot): Promise<string> {
  const id = (title: string): number => allTasks(s).find((t) => t.title === title)!.id;
  const [scan, extract, diff] = [id(TASK.scan), id(TASK.extract), id(TASK.diff)];
  await spawn(
    colony,
    s.goal.id,
    scan,
    SCANNER,
    `You are ${SCANNER}. You read the repository's docs/cli.md and list every CLI command it documents with its flags, as a JSON artifact in the goal channel.`,
  );
  await spawn(
    colony,
    s.goal.id,
    extract,
    VERIFIER,
    `You are ${VERIFIER}. You run \`colony <command> --help\` for every command to learn the real flags, compare them with the documented ones, and write ${REPORT_FILE}.`,
  );
  await assign(
    colony,
    SCANNER,
    { kind: 'assignment', goal_id: s.goal.id, tasks: [{ task_id: scan, name: TASK.scan }] },
    `Please claim task #${scan} (${TASK.scan}) of goal #${s.goal.id} and post the documented commands and flags.`,
  );
  await assign(
    colony,
    VERIFIER,
    {
      kind: 'assignment',
      goal_id: s.goal.id,
      tasks: [
        { task_id: extract, name: TASK.extract },
        { task_id: diff, name: TASK.diff, after: extract },
      ],
    },
    `Please claim task #${extract} (${TASK.extract}) of goal #${s.goal.id} now, and #${diff} (${TASK.diff}) once #${extract} is done.`,
  );
  const text = `Staffing: ${SCANNER} → #${scan} ${TASK.scan}; ${VERIFIER} → #${extract} ${TASK.extract}, then #${diff} ${TASK.diff} (command verifier checks ${REPORT_FILE}).`;
  await colony.call('send_message', {
    channel: s.goal.channel,
    body: text,
    metadata: JSON.stringify({ kind: 'staffing', tasks: { [SCANNER]: [scan], [VERIFIER]: [extract, diff] } }),
  });
  return text;
}

async function spawn(
  colony: Colony,
  goalId: number,
  parentTaskId: number,
  name: keyof typeof SPECIALIST_TOOLS,
  prompt: string,
): Promise<void> {
  const r = await colony.call<{ status: string; proposal_id: number }>('propose_agent', {
    goal_id: goalId,
    parent_task_id: parentTaskId,
    name,
    model: 'scripted (doc-gardener, no LLM)',
    system_prompt: prompt,
    tool_scope: SPECIALIST_TOOLS[name],
    autonomy_tier: 'assisted',
    reason: `A specialist for task #${parentTaskId}; its tools are a subset of ${COORDINATOR}'s.`,
  });
  if (r.status !== 'approved')
    throw new Error(`proposal #${r.proposal_id} for ${name} waits for the owner; this demo runs in auto-approve mode`);
}

const assign = (colony: Colony, to: string, metadata: AssignmentMetadata, body: string) =>
  colony.call('send_message', { to, body, metadata: JSON.stringify(metadata) });

/** Every leaf done or failed → complete the goal; work still out → wait for the specialists' DMs; handed in → wait (bounded) for its verifier. */
async function review(colony: Colony, goalId: number): Promise<string> {
  const deadline = Date.now() + REVIEW_WAIT_MS;
  for (;;) {
    const s = await goalSnapshot(colony, goalId);
    const leaves = leavesOf(s);
    if (leaves.every((t) => FINISHED_TASK.has(t.status))) return close(colony, s);
    const open = leaves.filter((t) => !FINISHED_TASK.has(t.status) && t.status !== 'awaiting_verification');
    if (open.length > 0) return `waiting for ${open.map((t) => `${t.title} (${t.status})`).join(', ')}`;
    if (Date.now() > deadline)
      return `still awaiting verification: ${leaves
        .filter((t) => t.status === 'awaiting_verification')
        .map((t) => t.title)
        .join(', ')}`;
    await sleep(500);
  }
}

async function close(colony: Colony, s: GoalSnapshot): Promise<string> {
  const leaves = leavesOf(s);
  const failed = leaves.filter((t) => t.status !== 'done');
  const status = failed.length === 0 ? 'completed' : 'stuck';
  const report = leaves.find((t) => t.title === TASK.diff);
  const summary =
    failed.length === 0
      ? `All ${leaves.length} tasks done and verified. ${report?.summary ?? ''}`.trim()
      : `Stuck: ${failed.map((t) => `${t.title} ${t.status}${t.failure_reason ? ` (${t.failure_reason})` : ''}`).join('; ')}`;
  if (status === 'completed') await closeRoot(colony, s, summary);
  await colony.call('complete_goal', { goal_id: s.goal.id, status, summary });
  return `goal #${s.goal.id} ${status}: ${summary}`;
}

/** The root is the coordinator's own task: it hands it in with the roll-up and the leaves' artifacts (auto-verified). */
async function closeRoot(colony: Colony, s: GoalSnapshot, summary: string): Promise<void> {
  const root = s.tasks_tree[0];
  if (!root || FINISHED_TASK.has(root.status)) return;
  const artifacts = leavesOf(s).flatMap((t) => t.artifact_message_ids);
  if (root.status === 'approved') await colony.call('claim_task', { task_id: root.id });
  await colony.call('complete_task', { task_id: root.id, summary, artifact_message_ids: artifacts });
}
