import {
  findTool,
  isSideRequest,
  SIDE_REPLY,
  type ModelScript,
  type NormalisedMessage,
  type ScriptReply,
  type ScriptTurnInput,
} from '../../testkit/model-endpoint/index.js';

/**
 * A scripted model that plays a whole team through a real agent CLI: it reads Colony's wake prompt (the
 * goal, the task, why it woke) and the results of the Colony tools it called, and asks the CLI for the next
 * call — the same policy as examples/quickstart/agent.mjs, but as an LLM would: one tool call per turn. The
 * coordinator (it is offered propose_task_tree) plans one leaf, hands it to `worker` when the plan is
 * approved, and closes the root and the goal when the leaf is done; the worker claims what it is told and
 * hands in its task. Works with every CLI: tools are found by their Colony name (findTool).
 */
type Call = { name: string; input: Record<string, unknown> };

export function teamScript(worker: string, usage = { input: 1200, output: 300 }): ModelScript {
  return (turn) => {
    if (isSideRequest(turn)) return SIDE_REPLY;
    const done = callsSinceUser(turn.messages);
    const plan = findTool(turn.toolNames, 'propose_task_tree') ? coordinator(turn, done, worker) : member(turn, done);
    const next = plan.find((c, i) => i >= done.length) ?? null;
    if (!next) return { text: 'All done for this wake.', usage };
    const name = findTool(turn.toolNames, next.name);
    return name
      ? { toolCalls: [{ name, input: next.input }], usage }
      : { text: `tool ${next.name} not offered`, usage };
  };
}

interface Done {
  tool: string;
  result: string;
}

/** The calls made since the last user prompt, with their results, in order. */
function callsSinceUser(messages: NormalisedMessage[]): Done[] {
  let start = 0;
  messages.forEach((m, i) => {
    if (m.role === 'user' && m.text && !m.toolResult) start = i + 1;
  });
  const out: Done[] = [];
  for (const m of messages.slice(start)) {
    if (m.toolCall) out.push({ tool: m.toolCall.name, result: '' });
    if (m.toolResult && out.length > 0) out[out.length - 1]!.result = m.toolResult.text;
  }
  return out;
}

const num = (text: string, re: RegExp): number | null => {
  const m = re.exec(text);
  return m ? Number(m[1]) : null;
};

function json(text: string): Record<string, unknown> {
  for (const candidate of [text, text.slice(text.indexOf('{'))]) {
    try {
      return JSON.parse(candidate) as Record<string, unknown>;
    } catch {
      /* try the next */
    }
  }
  return {};
}

interface TreeNode {
  id: number;
  status: string;
  assignee: unknown;
  children: TreeNode[];
}
const flatten = (nodes: TreeNode[]): TreeNode[] => nodes.flatMap((n) => [n, ...flatten(n.children ?? [])]);

function coordinator(turn: ScriptTurnInput, done: Done[], worker: string): Call[] {
  const goalId = num(turn.lastUserText, /# Goal #(\d+)/) ?? 0;
  const first: Call = { name: 'get_goal', input: { goal_id: goalId } };
  if (done.length === 0) return [first];
  const view = json(done[0]!.result);
  const goal = (view.goal ?? {}) as Record<string, unknown>;
  const tree = (view.tasks_tree ?? []) as TreeNode[];
  if (tree.length === 0)
    return goal.pending_proposal_id
      ? [first]
      : [
          first,
          {
            name: 'propose_task_tree',
            input: {
              goal_id: goalId,
              reasoning: 'One piece of work; the worker does it, I close the goal.',
              tree: {
                title: String(goal.title ?? 'The goal').slice(0, 200),
                description: String(goal.description ?? ''),
                children: [{ title: 'Do the work', description: 'Everything the goal asks.', billing_code: 'writing' }],
              },
            },
          },
        ];
  const root = tree[0]!;
  const leaves = flatten(tree).filter((t) => (t.children ?? []).length === 0);
  const waiting = leaves.filter((t) => t.status === 'approved' && !t.assignee);
  if (waiting.length > 0)
    return [
      first,
      {
        name: 'send_message',
        input: { to: worker, body: `Please claim and do ${waiting.map((t) => `#${t.id}`).join(' ')}.` },
      },
    ];
  if (!leaves.every((t) => t.status === 'done') || root.status === 'done') return [first];
  return [
    first,
    ...(root.status === 'approved' ? [{ name: 'claim_task', input: { task_id: root.id } }] : []),
    { name: 'complete_task', input: { task_id: root.id, summary: 'Every leaf is done.' } },
    { name: 'complete_goal', input: { goal_id: goalId, status: 'completed', summary: 'Done and verified.' } },
  ];
}

function member(turn: ScriptTurnInput, done: Done[]): Call[] {
  const taskId = num(turn.lastUserText, /# Task #(\d+)/);
  if (taskId !== null && /# Wake-up: .*task_assignment/.test(turn.lastUserText))
    return [{ name: 'complete_task', input: { task_id: taskId, summary: 'Done: the work the task asks.' } }];
  const read: Call = { name: 'read_inbox', input: { mark_read: true } };
  if (done.length === 0) return [read];
  const ids = [...new Set([...done[0]!.result.matchAll(/#(\d+)/g)].map((m) => Number(m[1])))];
  return [read, ...ids.map((id) => ({ name: 'claim_task', input: { task_id: id } }))];
}

export type { ScriptReply };
