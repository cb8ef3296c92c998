import assert from 'node:assert/strict';
import { before, after, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { configureRuntime, stopAgent } from '../../../src/actions/runs/agent-controls.js';
import { finishRun, requestRun, startQueuedRun, type RunOutcome } from '../../../src/actions/runs.js';
import { fixedClock } from '../../../src/clock.js';
import { getRun, runtimeOf, type RunRow } from '../../../src/projections/run-queries.js';
import { callTool, mcpFixture, textOf, type McpFixture } from '../../helpers/mcp.js';
import { okText } from '../../helpers/calls.js';

/**
 * agent_list, agent_get, session_list and codomyrmex's list_agents through a real
 * MCP Client, on one team whose runs were made with the run actions on a frozen, hand-advanced clock:
 * every status (IDLE, EXECUTING, ERROR, STOPPED), a spawned agent with a task and an unread DM, an agent
 * that never ran, and another tenant that must stay invisible.
 */
const T0 = '2026-03-01T09:00:00.000Z';
const OWNER = { actor: 'user:owner' };
const outcome = (agentText: string, status: RunOutcome['status'] = 'succeeded'): RunOutcome => ({
  status,
  exitCode: status === 'succeeded' ? 0 : 2,
  signal: null,
  durationMs: 5,
  tokensIn: 0,
  tokensOut: 0,
  costCents: 0,
  outputTail: '',
  agentText,
});

let f: McpFixture;
let owner: Client;
const ids: Record<string, number> = {};
const runs: Record<string, RunRow> = {};
let taskId: number;
let other: { userId: number; token: string };

before(async () => {
  const clock = fixedClock(T0);
  f = await mcpFixture({ clock });
  owner = await f.connect(f.ownerToken);
  ids.worker = f.agent.agentId;
  const add = (name: string, parentId: number | null = null, ownerId = f.owner.userId) => {
    const a = f.addAgent(name, {
      command: 'true',
      model: `model-${name}`,
      parentId,
      spawnDepth: parentId ? 1 : 0,
      ownerId,
    });
    configureRuntime(f.app, ownerId, a.agentId, { cooldownSec: 0 }, 'owner', OWNER);
    return a.agentId;
  };
  for (const name of ['alpha', 'gamma', 'delta', 'epsilon']) ids[name] = add(name);
  ids.beta = add('beta', ids.alpha);
  other = f.addOwner('other');
  ids.outsider = add('outsider', null, other.userId);
  const g = await callTool(owner, 'create_goal', {
    title: 'Views goal',
    description: 'A goal for the view tests',
    coordinator_config: 'alpha',
    approval_mode: 'auto',
  });
  const p = await callTool(owner, 'propose_task_tree', {
    goal_id: g.body.goal_id,
    tree: { title: 'Root task', description: 'The one task of the goal' },
  });
  taskId = (p.body.task_ids as number[])[0]!;
  const run = (name: string, finish: RunOutcome | null, task: number | null = null) => {
    clock.advance(60_000);
    const q = requestRun(f.app, { agentId: ids[name]!, source: 'manual', by: 'user-1', taskId: task });
    assert.equal(q.kind, 'queued', `${name}: ${q.run.reason}`);
    assert.ok(startQueuedRun(f.app, q.run.runId));
    if (finish) finishRun(f.app, q.run.runId, finish);
    runs[name] = getRun(f.app.engine.db, q.run.runId)!;
  };
  run('alpha', outcome('alpha is done'));
  run('beta', outcome('beta finished the root task'), taskId);
  run('gamma', outcome('it broke', 'failed'));
  run('epsilon', null);
  run('outsider', outcome('not yours'));
  stopAgent(f.app, f.owner.userId, ids.delta!, 'owner', 'not needed', OWNER);
  await callTool(owner, 'send_message', { to: 'beta', body: 'a note for beta' });
});
after(() => f.close());

const ts = (iso: string | null) => (iso ?? '').slice(0, 19);
const preview = (name: string) => runtimeOf(f.app.engine.db, ids[name]!).preview ?? '';
const last = (name: string) => runtimeOf(f.app.engine.db, ids[name]!).lastMessageAt;
const PRIVATE = '(private: only the agent, the agents that spawned it and the owner read its sessions)';
const row = (name: string, status: string, session: string | null, lastAt: string, shown = preview(name)) =>
  `- **${name}** [${status}] — -\n  id: \`${ids[name]}\`  session: \`${session ?? '(none)'}\`\n  model: ${name === 'worker' ? 'test-model' : `model-${name}`}  effort: -  last: ${ts(lastAt)}\n  ${shown.slice(0, 80)}`;

describe('agent_list', () => {
  it("every agent of the team, most recently active first, in xylocopa's text", async () => {
    const rows = [
      row('epsilon', 'EXECUTING', runs.epsilon!.sessionId, last('epsilon')!),
      row('gamma', 'ERROR', runs.gamma!.sessionId, last('gamma')!),
      row('beta', 'IDLE', runs.beta!.sessionId, last('beta')!),
      row('alpha', 'IDLE', runs.alpha!.sessionId, last('alpha')!),
      row('delta', 'STOPPED', null, T0), // never ran: ordered by creation, newest agent first
      row('worker', 'IDLE', null, T0),
    ];
    assert.equal(await okText(owner, 'agent_list'), `Found 6 agent(s):\n\n${rows.join('\n')}`);
    assert.equal(
      await okText(owner, 'agent_list', { limit: 1000 }),
      `Found 6 agent(s):\n\n${rows.join('\n')}`,
      'limit clamped to 100',
    );
    assert.equal(
      await okText(owner, 'agent_list', { limit: 0 }),
      `Found 1 agent(s):\n\n${rows[0]}`,
      'limit clamped to 1',
    );
    assert.equal(await okText(owner, 'agent_list', { limit: -5 }), `Found 1 agent(s):\n\n${rows[0]}`);
    assert.equal(
      await okText(owner, 'agent_list', { limit: 2 }),
      `Found 2 agent(s):\n\n${rows.slice(0, 2).join('\n')}`,
    );
    // An agent sees its owner's team, but another agent's last message is its transcript's: private.
    const worker = await f.connect(f.agentToken);
    const theirs = [
      row('epsilon', 'EXECUTING', runs.epsilon!.sessionId, last('epsilon')!, PRIVATE),
      row('gamma', 'ERROR', runs.gamma!.sessionId, last('gamma')!, PRIVATE),
      row('beta', 'IDLE', runs.beta!.sessionId, last('beta')!, PRIVATE),
      row('alpha', 'IDLE', runs.alpha!.sessionId, last('alpha')!, PRIVATE),
      row('delta', 'STOPPED', null, T0, PRIVATE),
      row('worker', 'IDLE', null, T0),
    ];
    assert.equal(
      await okText(worker, 'agent_list'),
      `Found 6 agent(s):\n\n${theirs.join('\n')}`,
      "an agent sees its owner's team, not their transcripts",
    );
  });

  it('filters: status case-insensitively; any project finds nothing (agents have none yet)', async () => {
    assert.equal(
      await okText(owner, 'agent_list', { status: ' idle ' }),
      `Found 3 agent(s):\n\n${[
        row('beta', 'IDLE', runs.beta!.sessionId, last('beta')!),
        row('alpha', 'IDLE', runs.alpha!.sessionId, last('alpha')!),
        row('worker', 'IDLE', null, T0),
      ].join('\n')}`,
    );
    assert.match(
      await okText(owner, 'agent_list', { status: 'error' }),
      /^Found 1 agent\(s\):\n\n- \*\*gamma\*\* \[ERROR\]/,
    );
    assert.match(
      await okText(owner, 'agent_list', { status: 'Stopped' }),
      /^Found 1 agent\(s\):\n\n- \*\*delta\*\* \[STOPPED\]/,
    );
    assert.match(
      await okText(owner, 'agent_list', { status: 'EXECUTING' }),
      /^Found 1 agent\(s\):\n\n- \*\*epsilon\*\* \[EXECUTING\]/,
    );
    assert.equal(await okText(owner, 'agent_list', { status: 'RUNNING' }), 'No agents found. (status=RUNNING)');
    assert.equal(
      await okText(owner, 'agent_list', { project: 'test-mcp-proj', status: 'RUNNING' }),
      'No agents found. (project=test-mcp-proj, status=RUNNING)',
    );
    assert.equal(
      await okText(owner, 'agent_list', { project: 'test-mcp-proj' }),
      'No agents found. (project=test-mcp-proj)',
    );
    assert.equal(await okText(await f.connect(f.addOwner('lonely').token), 'agent_list'), 'No agents found.');
  });
});

describe('agent_get', () => {
  it('a spawned agent: its session, the task of its latest run, its parent, its unread DMs', async () => {
    const expected = [
      '# Agent: beta',
      `- id: \`${ids.beta}\``,
      '- project: -',
      '- status: IDLE',
      '- mode: AUTO',
      `- session_id: \`${runs.beta!.sessionId}\``,
      '- model: model-beta  effort: -',
      '- branch: -  worktree: -',
      '- tmux_pane: -',
      `- task_id: ${taskId}`,
      `- parent_id: ${ids.alpha}  is_subagent: True`,
      '- unread: 1  muted: False  pending_suggestions: False',
      `- created: ${ts(T0)}`,
      `- last_message_at: ${ts(last('beta'))}`,
      '',
      '## Last message preview',
      'beta finished the root task',
    ].join('\n');
    for (const id of ['beta', String(ids.beta), runs.beta!.sessionId!, runs.beta!.sessionId!.slice(0, 7), 'bet'])
      assert.equal(await okText(owner, 'agent_get', { agent_id: id }), expected, id);
    const { result } = await callTool(owner, 'agent_get', { agent_id: 'beta' });
    assert.deepEqual((result.structuredContent as { agent: Record<string, unknown> }).agent, {
      agent_id: ids.beta,
      name: 'beta',
      status: 'IDLE',
      project: '-',
      session_id: runs.beta!.sessionId,
      model: 'model-beta',
      effort: '-',
      preview: 'beta finished the root task',
      mode: 'AUTO',
      branch: '-',
      worktree: '-',
      tmux_pane: '-',
      task_id: taskId,
      parent_id: ids.alpha,
      is_subagent: true,
      unread: 1,
      muted: false,
      pending_suggestions: false,
      created_at: T0,
      last_message_at: last('beta'),
    });
  });

  it('an agent that never ran, a stopped one, one whose run failed, a miss', async () => {
    assert.equal(
      await okText(owner, 'agent_get', { agent_id: 'worker' }),
      [
        '# Agent: worker',
        `- id: \`${ids.worker}\``,
        '- project: -',
        '- status: IDLE',
        '- mode: AUTO',
        '- session_id: `(none)`',
        '- model: test-model  effort: -',
        '- branch: -  worktree: -',
        '- tmux_pane: -',
        '- task_id: -',
        '- parent_id: -  is_subagent: False',
        '- unread: 0  muted: False  pending_suggestions: False',
        `- created: ${ts(T0)}`,
        '- last_message_at: (never)',
        '',
        '## Last message preview',
        '(no messages)',
      ].join('\n'),
    );
    assert.match(await okText(owner, 'agent_get', { agent_id: 'delta' }), /^- status: STOPPED$/m);
    assert.match(
      await okText(owner, 'agent_get', { agent_id: 'gamma' }),
      /^- status: ERROR$[^]*\n## Last message preview\nit broke$/m,
    );
    for (const id of ['bogus', 'outsider', runs.outsider!.sessionId!]) {
      assert.equal(await okText(owner, 'agent_get', { agent_id: id }), `No agent found matching: ${id}`);
    }
    // another tenant's agent id is not an agent of ours (as a session id prefix it may still find one of our sessions)
    assert.doesNotMatch(await okText(owner, 'agent_get', { agent_id: String(ids.outsider) }), /outsider/);
  });
});

describe('session_list', () => {
  it("started sessions of the team, newest activity first, in xylocopa's text; a project filter finds nothing", async () => {
    const block = (name: string, status: string) => {
      const r = getRun(f.app.engine.db, runs[name]!.runId)!;
      return `- **${name}** [${status}] — -\n  session: \`${r.sessionId}\`  agent: \`${ids[name]}\`\n  ${ts(r.lastMessageAt)}  ${(r.preview ?? '').slice(0, 100)}\n`;
    };
    const blocks = [
      block('epsilon', 'EXECUTING'),
      block('gamma', 'ERROR'),
      block('beta', 'IDLE'),
      block('alpha', 'IDLE'),
    ];
    assert.equal(await okText(owner, 'session_list'), `Found 4 session(s):\n\n${blocks.join('\n')}`);
    assert.equal(await okText(owner, 'list_sessions'), await okText(owner, 'session_list'));
    assert.equal(await okText(owner, 'session_list', { project: 'proj' }), 'No sessions found. (project filter: proj)');
    const them = await f.connect(other.token);
    assert.equal(await okText(them, 'session_list'), `Found 1 session(s):\n\n${block('outsider', 'IDLE')}`);
  });
});

describe('list_agents (codomyrmex)', () => {
  it("descriptors of the team by id, in codomyrmex's shape and keys, text = JSON", async () => {
    const { result, body } = await callTool(owner, 'list_agents');
    assert.ok(!result.isError);
    assert.equal(textOf(result), JSON.stringify(result.structuredContent));
    const d = (name: string, type: 'cli' | 'api', model: string) => ({
      name,
      display_name: name,
      agent_type: type,
      env_var: null,
      config_key: name,
      default_model: model,
      client_path: null,
    });
    assert.deepEqual(body, {
      status: 'success',
      agents: [
        d('worker', 'api', 'test-model'),
        ...['alpha', 'gamma', 'delta', 'epsilon', 'beta'].map((n) => d(n, 'cli', `model-${n}`)),
      ],
      count: 6,
    });
    for (const a of body.agents as Record<string, unknown>[]) {
      assert.deepEqual(Object.keys(a), [
        'name',
        'display_name',
        'agent_type',
        'env_var',
        'config_key',
        'default_model',
        'client_path',
      ]);
      assert.ok(!('probe' in a));
    }
    const them = await callTool(await f.connect(other.token), 'list_agents');
    assert.deepEqual(them.body, { status: 'success', agents: [d('outsider', 'cli', 'model-outsider')], count: 1 });
    const lonely = await callTool(await f.connect(f.addOwner('empty').token), 'list_agents');
    assert.deepEqual(lonely.body, { status: 'success', agents: [], count: 0 });
  });
});
