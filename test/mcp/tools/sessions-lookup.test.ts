import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { configureRuntime } from '../../../src/actions/runs/agent-controls.js';
import {
  finishRun,
  recordSessionMessage,
  requestRun,
  startQueuedRun,
  type RunOutcome,
} from '../../../src/actions/runs.js';
import { fixedClock } from '../../../src/clock.js';
import type { SessionRole } from '../../../src/events/runs.js';
import { getRun, type RunRow } from '../../../src/projections/run-queries.js';
import { sessionMessages } from '../../../src/projections/session-message-queries.js';
import { callTool, mcpFixture, textOf, type McpFixture } from '../../helpers/mcp.js';
import { okText } from '../../helpers/calls.js';

/**
 * session_read / session_tail / agent_get lookups and get_agent_memory on
 * runs made with the run actions on a frozen, hand-advanced clock — no processes — so which session is
 * "the latest" is known exactly. Everything is read through a real MCP Client.
 */
const T0 = '2026-03-01T09:00:00.000Z';
const OWNER = { actor: 'user:owner' };
const done = (agentText: string | null, status: RunOutcome['status'] = 'succeeded'): RunOutcome => ({
  status,
  exitCode: status === 'succeeded' ? 0 : 1,
  signal: null,
  durationMs: 5,
  tokensIn: 0,
  tokensOut: 0,
  costCents: 0,
  outputTail: '',
  agentText,
});

interface World {
  f: McpFixture;
  clock: ReturnType<typeof fixedClock>;
  owner: Client;
  agent(name: string, extra?: { parentId?: number; ownerId?: number }): number;
  /** Queues and starts a run (its wake prompt is message 1), records `messages`, and finishes it unless `finish` is null. */
  run(agentId: number, messages?: [SessionRole, string][], finish?: RunOutcome | null, taskId?: number): RunRow;
}

async function world(t: TestContext): Promise<World> {
  const clock = fixedClock(T0);
  const f = await mcpFixture({ clock });
  t.after(() => f.close());
  const agent = (name: string, extra: { parentId?: number; ownerId?: number } = {}) => {
    const ownerId = extra.ownerId ?? f.owner.userId;
    const a = f.addAgent(name, {
      command: 'true',
      model: `model-${name}`,
      parentId: extra.parentId ?? null,
      spawnDepth: extra.parentId ? 1 : 0,
      ownerId,
    });
    configureRuntime(f.app, ownerId, a.agentId, { cooldownSec: 0 }, 'owner', OWNER);
    return a.agentId;
  };
  const run: World['run'] = (agentId, messages = [], finish = done('done'), taskId) => {
    clock.advance(60_000);
    const queued = requestRun(f.app, { agentId, source: 'manual', by: 'user-1', taskId: taskId ?? null });
    assert.equal(queued.kind, 'queued', `run of agent ${agentId} was ${queued.kind}: ${queued.run.reason}`);
    assert.ok(startQueuedRun(f.app, queued.run.runId), 'the run started');
    for (const [role, content] of messages) recordSessionMessage(f.app, queued.run.runId, role, content);
    if (finish) finishRun(f.app, queued.run.runId, finish);
    return getRun(f.app.engine.db, queued.run.runId)!;
  };
  return { f, clock, owner: await f.connect(f.ownerToken), agent, run };
}

const sessionHeader = (text: string): string => /Session ID: `([0-9a-f]{12})`/.exec(text)?.[1] ?? '(none)';
const agentLine = (text: string): string => /^# Agent: (.+)$/m.exec(text)?.[1] ?? '(none)';

describe('the lookup rules of session_read, session_tail and agent_get', () => {
  it('exact session id, then agent id or name (its latest session), then session prefix, then name prefix (latest activity)', async (t) => {
    const w = await world(t);
    const alpha = w.agent('alpha');
    const alpine = w.agent('alpine');
    const r1 = w.run(alpha, [['agent', 'first answer']]);
    const r2 = w.run(alpha, [['agent', 'second answer']]);
    w.run(alpine, [], null); // alpine runs last: the most recent activity
    // 1) an exact session id reads that session, not the agent's latest
    assert.equal(sessionHeader(await okText(w.owner, 'session_read', { session_id: r1.sessionId })), r1.sessionId);
    // 2) an agent id or name reads the agent's latest session
    assert.equal(sessionHeader(await okText(w.owner, 'session_read', { session_id: String(alpha) })), r2.sessionId);
    assert.equal(sessionHeader(await okText(w.owner, 'session_tail', { session_id: 'alpha' })), r2.sessionId);
    // 3) a session id prefix
    assert.equal(
      sessionHeader(await okText(w.owner, 'session_read', { session_id: r1.sessionId!.slice(0, 10) })),
      r1.sessionId,
    );
    // 4) a name prefix: the most recently active of alpha and alpine
    assert.equal(agentLine(await okText(w.owner, 'agent_get', { agent_id: 'alp' })), 'alpine');
    assert.equal(agentLine(await okText(w.owner, 'agent_get', { agent_id: 'alph' })), 'alpha');
    assert.equal(agentLine(await okText(w.owner, 'agent_get', { agent_id: r2.sessionId })), 'alpha');
    assert.equal(agentLine(await okText(w.owner, 'agent_get', { agent_id: String(alpine) })), 'alpine');
  });

  it('an exact name beats a session prefix, and a session prefix beats a name prefix', async (t) => {
    const w = await world(t);
    const first = w.agent('first');
    // names start with a letter: find a session whose id does (each has a 6-in-16 chance)
    let s: RunRow | undefined;
    for (let i = 0; i < 64 && !s; i += 1) {
      const r = w.run(i === 0 ? first : w.agent(`filler-${i}`), [], done('x'));
      if (/^[a-f]/.test(r.sessionId!)) s = r;
    }
    assert.ok(s, 'a session id starting with a letter');
    const owner = getRun(w.f.app.engine.db, s.runId)!.agentId;
    const named = w.agent(s.sessionId!.slice(0, 6)); // its name is a prefix of the session id
    w.agent(`${s.sessionId!.slice(0, 4)}-zz`);
    const get = async (id: string) => /- id: `(\d+)`/.exec(await okText(w.owner, 'agent_get', { agent_id: id }))?.[1];
    assert.equal(
      await get(s.sessionId!.slice(0, 6)),
      String(named),
      'exact name (rule 2) before session prefix (rule 3)',
    );
    assert.equal(
      await get(s.sessionId!.slice(0, 4)),
      String(owner),
      'session prefix (rule 3) before name prefix (rule 4)',
    );
    assert.equal(await get(s.sessionId!), String(owner), 'exact session id (rule 1)');
  });

  it('LIKE wildcards are literal, an empty identifier matches nothing, other tenants are invisible', async (t) => {
    const w = await world(t);
    const alpha = w.agent('alpha');
    const r = w.run(alpha);
    const other = w.f.addOwner('other');
    const theirs = w.agent('alpha-two', { ownerId: other.userId });
    const theirRun = w.run(theirs);
    for (const id of [
      '%',
      '_',
      'a%',
      'alp_a',
      '%a',
      '\\',
      '',
      theirRun.sessionId!,
      'alpha-two',
      theirRun.sessionId!.slice(0, 8),
    ]) {
      for (const tool of ['session_read', 'session_tail'])
        assert.equal(
          await okText(w.owner, tool, { session_id: id }),
          `No agent found matching: ${id}`,
          `${tool}(${id})`,
        );
      assert.equal(
        await okText(w.owner, 'agent_get', { agent_id: id }),
        `No agent found matching: ${id}`,
        `agent_get(${id})`,
      );
    }
    // their agent's id is not an agent of ours (it may still prefix one of our session ids: then that one is found)
    assert.doesNotMatch(await okText(w.owner, 'agent_get', { agent_id: String(theirs) }), /alpha-two/);
    // the other tenant sees its own, and not ours
    const them = await w.f.connect(other.token);
    assert.equal(
      sessionHeader(await okText(them, 'session_read', { session_id: 'alpha' })),
      theirRun.sessionId,
      'alpha is a prefix of their alpha-two',
    );
    assert.equal(
      await okText(them, 'session_read', { session_id: r.sessionId }),
      `No agent found matching: ${r.sessionId}`,
    );
    // an agent's tenant is its owner's, but a peer's transcript is not its to read
    const worker = await w.f.connect(w.f.agentToken);
    assert.equal(await okText(worker, 'session_read', { session_id: 'alpha' }), 'No agent found matching: alpha');
  });

  it("an agent that never ran has no session; a queued run's session exists but has no messages", async (t) => {
    const w = await world(t);
    assert.equal(
      await okText(w.owner, 'session_read', { session_id: 'worker' }),
      'Session not found for worker (-).\nThe agent has no session yet: it has never run.',
    );
    const busy = w.agent('busy');
    w.run(busy, [], null); // still running
    const queued = requestRun(w.f.app, { agentId: busy, source: 'manual', by: 'user-1', prompt: 'later' });
    assert.equal(queued.kind, 'queued');
    const sid = queued.run.sessionId!;
    assert.equal(
      await okText(w.owner, 'session_read', { session_id: sid }),
      `Session ${sid} exists but has no messages in display file.`,
    );
    assert.deepEqual(JSON.parse(await okText(w.owner, 'get_agent_memory', { session_id: sid })), {
      status: 'success',
      logs: [],
      session_id: sid,
    });
    // queued sessions are not listed, and a prefix only finds started ones
    assert.doesNotMatch(await okText(w.owner, 'session_list'), new RegExp(sid));
  });
});

describe('session_read and session_tail texts', () => {
  it('header, roles, timestamps, max_turns trimming and its bounds', async (t) => {
    const w = await world(t);
    const alpha = w.agent('alpha');
    const r = w.run(
      alpha,
      [
        ['system', 'a note'],
        ['user', 'a question'],
        ['agent', 'an answer'],
      ],
      done('final words'),
    );
    const rows = sessionMessages(w.f.app.engine.db, r.runId);
    assert.equal(rows.length, 5);
    const label = { user: 'User', agent: 'Agent', system: 'System' } as const;
    const block = (from: number) =>
      rows
        .slice(from)
        .map((m) => `**[${label[m.role]}]** ${m.at.slice(0, 19)}\n${m.content}\n`)
        .join('\n');
    const head = (extra: string) =>
      `# Session: alpha (-)\nSession ID: \`${r.sessionId}\`\nMessages: 5 total${extra}\n\n`;
    assert.equal(await okText(w.owner, 'session_read', { session_id: r.sessionId }), head('') + block(0));
    assert.equal(
      await okText(w.owner, 'session_read', { session_id: r.sessionId, max_turns: 2 }),
      head(' (showing last 2)') + block(3),
    );
    assert.equal(
      await okText(w.owner, 'session_tail', { session_id: 'alpha', max_turns: 1 }),
      head(' (showing last 1)') + block(4),
    );
    assert.equal(
      await okText(w.owner, 'session_tail', { session_id: 'alpha' }),
      head('') + block(0),
      'tail shows up to 10',
    );
    assert.equal(
      await okText(w.owner, 'session_read', { session_id: r.sessionId, max_turns: 1000 }),
      head('') + block(0),
    );
    for (const max_turns of [0, -1, 1001, 2.5]) {
      const { result } = await callTool(w.owner, 'session_read', { session_id: r.sessionId, max_turns });
      assert.ok(result.isError && textOf(result).startsWith('ErrInvalidInput: '), `max_turns ${max_turns} is refused`);
    }
  });
});

describe('get_agent_memory (codomyrmex)', () => {
  it('the last 50 messages, roles mapped, by exact id or unique prefix; else "Session X not found."', async (t) => {
    const w = await world(t);
    const alpha = w.agent('alpha');
    const roles = ['user', 'agent', 'system'] as const;
    const r = w.run(
      alpha,
      Array.from({ length: 60 }, (_, i) => [roles[i % 3]!, `message ${i + 1}`] as [SessionRole, string]),
      done(null),
    );
    const call = async (session_id: string) => {
      const { result, body } = await callTool(w.owner, 'get_agent_memory', { session_id });
      assert.ok(!result.isError);
      assert.equal(textOf(result), JSON.stringify(result.structuredContent), 'the text is the JSON of the result');
      return body;
    };
    const mapped = { user: 'user', agent: 'assistant', system: 'system' } as const;
    const expected = Array.from({ length: 50 }, (_, i) => ({
      role: mapped[roles[(i + 10) % 3]!],
      content: `message ${i + 11}`,
    }));
    assert.deepEqual(await call(r.sessionId!), { status: 'success', logs: expected, session_id: r.sessionId });
    assert.deepEqual(await call(r.sessionId!.slice(0, 5)), {
      status: 'success',
      logs: expected,
      session_id: r.sessionId,
    });
    // An agent id is no session id — unless the random session id happens to start with its digits (then it is a unique prefix).
    const agentId = r.sessionId!.startsWith(String(alpha)) ? [] : [String(alpha)];
    for (const id of ['nope', 'alpha', ...agentId, '%', ''])
      assert.deepEqual(await call(id), { status: 'error', message: `Session ${id} not found.` });
    // a prefix two sessions share is not found (16 more sessions make two share their first hex digit)
    const ids = [r.sessionId!];
    for (let i = 0; i < 16; i += 1) ids.push(w.run(w.agent(`more-${i}`)).sessionId!);
    const shared = ids.map((s) => s[0]!).find((c, i, all) => all.indexOf(c) !== i)!;
    assert.deepEqual(await call(shared), { status: 'error', message: `Session ${shared} not found.` });
  });
});
