/**
 * The quickstart's scripted agent: a stand-in for `claude -p` that needs no LLM and no network beyond
 * this Colony, so the README's quickstart runs anywhere in under a minute. Colony starts it for every run
 * of every agent of the team (it is the team's agent-command); what it does depends on COLONY_AGENT:
 *
 * - `coordinator`: plans a new goal (one task tree: the goal as its root, two leaves), hands the leaves
 *   to the worker once the owner approved (it is woken by the approval DM), and when both leaves are done
 *   (woken by `children_done`) closes the root and completes the goal;
 * - any other agent (the worker): claims the tasks the coordinator named in a DM, and hands each one in
 *   when Colony wakes it with the task.
 *
 * It connects with $COLONY_MCP_CONFIG alone — exactly what a real CLI agent is given — reads its wake
 * prompt on stdin and ends with Claude Code's final usage line, so Colony records its runs like real ones.
 */
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const WORKER = process.env.QUICKSTART_WORKER ?? 'writer';
const CLOSED = new Set(['completed', 'stuck', 'cancelled']);

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

async function connect() {
  const { url, headers } = JSON.parse(readFileSync(process.env.COLONY_MCP_CONFIG, 'utf8')).mcpServers.colony;
  const client = new Client({ name: 'quickstart-agent', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  const call = async (name, args = {}) => {
    const r = await client.callTool({ name, arguments: args });
    const text = r.content?.map((c) => c.text ?? '').join('') ?? '';
    if (r.isError) throw new Error(`${name}: ${text}`);
    return r.structuredContent ?? (text.startsWith('{') ? JSON.parse(text) : { text });
  };
  return { call, close: () => client.close() };
}

const flatten = (nodes) => nodes.flatMap((n) => [n, ...flatten(n.children)]);

/** The goal this run is about: the one Colony named, else the newest open goal this agent coordinates. */
async function goalOf(call) {
  if (process.env.COLONY_GOAL_ID) return Number(process.env.COLONY_GOAL_ID);
  const { goals } = await call('list_goals', {});
  const mine = goals.find((g) => !CLOSED.has(g.status) && g.coordinator === process.env.COLONY_AGENT);
  return mine?.id ?? null;
}

async function coordinate(call) {
  const goalId = await goalOf(call);
  if (goalId === null) return 'no open goal to coordinate';
  const { goal, tasks_tree: tree } = await call('get_goal', { goal_id: goalId });
  if (CLOSED.has(goal.status)) return `goal #${goalId} is already ${goal.status}`;
  if (tree.length === 0) {
    if (goal.pending_proposal_id) return `goal #${goalId}: the plan waits for the owner`;
    const p = await call('propose_task_tree', {
      goal_id: goalId,
      reasoning: 'Gather what changed, then write it up; the writer does both, I close the goal.',
      tree: {
        title: goal.title.slice(0, 200),
        description: goal.description,
        children: [
          {
            title: 'Collect the changes',
            description: 'List every change that goes into this goal, one line each.',
            billing_code: 'research',
          },
          {
            title: 'Write it up',
            description: 'Turn the collected changes into the finished text.',
            billing_code: 'writing',
          },
        ],
      },
    });
    return `proposed a plan for goal #${goalId} (proposal #${p.proposal_id}, ${p.status})`;
  }
  const [root] = tree;
  const leaves = flatten(tree).filter((t) => t.children.length === 0);
  const waiting = leaves.filter((t) => t.status === 'approved' && !t.assignee);
  if (waiting.length > 0) {
    await call('send_message', {
      to: WORKER,
      body: `Please claim and do ${waiting.map((t) => `#${t.id}`).join(' ')} (goal ${goalId}; only the task ids have a #).`,
    });
    return `handed ${waiting.map((t) => `#${t.id}`).join(' ')} to ${WORKER}`;
  }
  if (leaves.every((t) => t.status === 'done') && root.status !== 'done') {
    if (root.status === 'approved') await call('claim_task', { task_id: root.id });
    await call('complete_task', { task_id: root.id, summary: `Done: ${leaves.map((t) => t.title).join('; ')}.` });
  }
  const now = (await call('get_goal', { goal_id: goalId })).tasks_tree[0];
  if (now.status !== 'done') return `goal #${goalId}: work in progress`;
  await call('complete_goal', {
    goal_id: goalId,
    status: 'completed',
    summary: `Every task of "${goal.title}" is done and verified.`,
  });
  return `completed goal #${goalId}`;
}

async function work(call) {
  const taskId = Number(process.env.COLONY_TASK_ID ?? 0);
  if (taskId) {
    await call('complete_task', { task_id: taskId, summary: `Done: ${process.env.COLONY_TASK_TITLE}.` });
    return `handed in task #${taskId}`;
  }
  const { messages } = await call('read_inbox', { mark_read: true });
  const named = new Set(messages.flatMap((m) => [...m.body.matchAll(/#(\d+)/g)].map((x) => Number(x[1]))));
  const claimed = [];
  for (const id of named) {
    try {
      await call('claim_task', { task_id: id });
      claimed.push(id);
    } catch {
      // A goal id, or a task someone else holds: not ours to take.
    }
  }
  return claimed.length ? `claimed ${claimed.map((id) => `#${id}`).join(' ')}` : 'nothing to claim';
}

const prompt = await readStdin();
let result;
let code = 0;
let colony;
try {
  colony = await connect();
  result = await (process.env.COLONY_AGENT === 'coordinator' ? coordinate : work)(colony.call);
} catch (e) {
  result = `failed: ${e.message}`;
  code = 1;
} finally {
  await colony?.close();
}
process.stdout.write(
  `${result}\n${JSON.stringify({ type: 'result', result, total_cost_usd: 0, usage: { input_tokens: Math.ceil(prompt.length / 4), output_tokens: Math.ceil(result.length / 4) } })}\n`,
);
process.exitCode = code;
