import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { configureRuntime } from '../../../src/actions/runs/agent-controls.js';
import { createOwner, registerAgent } from '../../../src/actions/principals.js';
import { type RunRow } from '../../../src/projections/run-queries.js';
import { sessionMessages } from '../../../src/projections/session-message-queries.js';
import { runtimeFixture, type RuntimeFixture } from '../../helpers/runtime.js';
import { answer, okText } from '../../helpers/calls.js';

/**
 * The session tools on real runs: agents whose backends are shell commands, woken by
 * the reactor, their transcripts read back through a real MCP Client over HTTP — xylocopa's empty
 * answers and alias byte-equality (its acceptance script's checks 27–31), the display format, the 3000-character
 * cut, the 64 KiB cap marker, and tenant scoping.
 */
const USAGE = `{"type":"result","result":"echoer finished","total_cost_usd":0.01,"usage":{"input_tokens":10,"output_tokens":5}}`;
const SESSION_TOOLS = [
  'session_list',
  'session_read',
  'session_tail',
  'list_sessions',
  'read_session',
  'get_agent_memory',
];

let f: RuntimeFixture;
let owner: Client;
const runs: Record<string, RunRow> = {};
const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  (await answer(client, name, args)).result;

async function runOnce(name: string): Promise<RunRow> {
  const agentId = f.addRunner(name, commands[name]!, {}, { toolScope: SESSION_TOOLS }).agentId;
  const run = await f.reactor.whenDone(f.reactor.wake({ agentId, source: 'manual', by: 'user-1' }).run.runId);
  assert.equal(run.status, 'succeeded', `${name}: ${run.outputTail}`);
  return run;
}

const commands: Record<string, string> = {
  echoer: `cat >/dev/null; echo "hello from $COLONY_AGENT"; echo '${USAGE}'`,
  long: `cat >/dev/null; head -c 3500 /dev/zero | tr '\\0' y`,
  huge: `cat >/dev/null; head -c 70000 /dev/zero | tr '\\0' z`,
};

before(async () => {
  f = await runtimeFixture();
  owner = await f.connect(f.ownerToken);
});
after(() => f.close());

describe('before any run', () => {
  it('no sessions, no agent found, no agents found, and the aliases answer byte for byte the same', async () => {
    assert.equal(await okText(owner, 'session_list'), 'No sessions found.');
    assert.equal(
      await okText(owner, 'session_list', { project: 'test-mcp-proj' }),
      'No sessions found. (project filter: test-mcp-proj)',
    );
    for (const tool of ['session_read', 'session_tail', 'read_session'])
      assert.equal(
        await okText(owner, tool, { session_id: 'ghost-session' }),
        'No agent found matching: ghost-session',
      );
    assert.equal(
      await okText(owner, 'agent_list', { project: 'test-mcp-proj', status: 'RUNNING' }),
      'No agents found. (project=test-mcp-proj, status=RUNNING)',
    );
    assert.equal(await okText(owner, 'agent_get', { agent_id: 'bogus' }), 'No agent found matching: bogus');
    const nobody = createOwner(f.app, 'nobody', { actor: 'system' });
    assert.equal(await okText(await f.connect(nobody.token), 'agent_list'), 'No agents found.');
    assert.deepEqual(await call(owner, 'list_sessions'), await call(owner, 'session_list'));
    assert.deepEqual(
      await call(owner, 'read_session', { session_id: 'ghost-session' }),
      await call(owner, 'session_read', { session_id: 'ghost-session' }),
    );
  });
});

describe('real runs', () => {
  before(async () => {
    for (const name of Object.keys(commands)) runs[name] = await runOnce(name);
  });

  it("session_read shows the wake prompt and the agent's answer in the display format", async () => {
    const r = runs.echoer!;
    const [prompt, answer] = sessionMessages(f.app.engine.db, r.runId);
    assert.equal(answer!.content, 'echoer finished', "the final usage object's result is the agent's message");
    assert.match(prompt!.content, /You are echoer, a scripted test agent\./);
    assert.equal(
      await okText(owner, 'session_read', { session_id: r.sessionId }),
      [
        '# Session: echoer (-)',
        `Session ID: \`${r.sessionId}\``,
        'Messages: 2 total',
        '',
        `**[User]** ${prompt!.at.slice(0, 19)}`,
        prompt!.content,
        '',
        `**[Agent]** ${answer!.at.slice(0, 19)}`,
        'echoer finished',
        '',
      ].join('\n'),
    );
    assert.equal(
      await okText(owner, 'session_tail', { session_id: 'echoer', max_turns: 1 }),
      [
        '# Session: echoer (-)',
        `Session ID: \`${r.sessionId}\``,
        'Messages: 2 total (showing last 1)',
        '',
        `**[Agent]** ${answer!.at.slice(0, 19)}`,
        'echoer finished',
        '',
      ].join('\n'),
    );
    assert.match(
      await okText(owner, 'session_list'),
      new RegExp(
        `- \\*\\*echoer\\*\\* \\[IDLE\\] — -\\n  session: \`${r.sessionId}\`  agent: \`${r.agentId}\`\\n  \\S+  echoer finished\\n`,
      ),
    );
  });

  it('a turn over 3000 characters is cut and marked "... [truncated]"', async () => {
    const shown = await okText(owner, 'session_read', { session_id: runs.long!.sessionId });
    assert.ok(shown.endsWith(`\n${'y'.repeat(3000)}\n... [truncated]\n`), 'cut at exactly 3000');
    assert.ok(!shown.includes('y'.repeat(3001)));
    const { structuredContent } = await call(owner, 'session_read', { session_id: runs.long!.sessionId });
    const last = (structuredContent as { messages: Record<string, unknown>[] }).messages.at(-1)!;
    assert.deepEqual([last.truncated, last.capped, last.bytes], [true, false, 3500]);
  });

  it('a 70 000-character output is capped at 64 KiB when recorded; the cap marker shows through session_read and get_agent_memory', async () => {
    const marker = '… [truncated: 4464 of 70000 bytes omitted]';
    const shown = await okText(owner, 'session_read', { session_id: runs.huge!.sessionId });
    assert.ok(shown.endsWith(`\n${'z'.repeat(3000)}\n... [truncated]\n${marker}\n`), shown.slice(-200));
    const memory = JSON.parse(await okText(owner, 'get_agent_memory', { session_id: runs.huge!.sessionId })) as {
      logs: { role: string; content: string }[];
    };
    assert.deepEqual(
      memory.logs.map((l) => l.role),
      ['user', 'assistant'],
    );
    assert.equal(memory.logs[1]!.content, `${'z'.repeat(65_536)}\n${marker}`);
  });

  it('aliases are byte-identical to their canonical tools (text and structuredContent)', async () => {
    assert.deepEqual(await call(owner, 'list_sessions'), await call(owner, 'session_list'));
    assert.deepEqual(
      await call(owner, 'list_sessions', { project: 'p' }),
      await call(owner, 'session_list', { project: 'p' }),
    );
    for (const args of [
      { session_id: runs.echoer!.sessionId },
      { session_id: 'huge' },
      { session_id: 'long', max_turns: 1 },
      { session_id: 'nothing' },
    ]) {
      assert.deepEqual(await call(owner, 'read_session', args), await call(owner, 'session_read', args));
    }
    assert.match(await okText(owner, 'session_list'), /^Found 3 session\(s\):\n\n/);
  });

  it('an agent never reads a peer\'s sessions; another tenant\'s sessions and agents are "No agent found"', async () => {
    const reader = await f.connect(f.addRunner('reader', 'true', {}, { toolScope: SESSION_TOOLS }).token);
    assert.equal(
      await okText(reader, 'session_read', { session_id: runs.long!.sessionId }),
      `No agent found matching: ${runs.long!.sessionId}`,
    );
    assert.match(await okText(owner, 'session_read', { session_id: runs.long!.sessionId }), /^# Session: long/);
    const other = createOwner(f.app, 'other', { actor: 'system' });
    const stranger = registerAgent(
      f.app,
      {
        name: 'stranger',
        ownerId: other.userId,
        model: 'scripted',
        systemPrompt: 'You are a stranger.',
        toolScope: ['whoami'],
        tier: 'autonomous',
        command: `cat >/dev/null; echo '${USAGE}'`,
        parentId: null,
        spawnDepth: 0,
      },
      { actor: 'user:other' },
    );
    configureRuntime(f.app, other.userId, stranger.agentId, { cooldownSec: 0 }, 'other', { actor: 'user:other' });
    const theirs = await f.reactor.whenDone(
      f.reactor.wake({ agentId: stranger.agentId, source: 'manual', by: `user-${other.userId}` }).run.runId,
    );
    assert.equal(theirs.status, 'succeeded');
    for (const id of [theirs.sessionId!, 'stranger']) {
      assert.equal(await okText(owner, 'session_read', { session_id: id }), `No agent found matching: ${id}`);
      assert.equal(await okText(owner, 'agent_get', { agent_id: id }), `No agent found matching: ${id}`);
    }
    assert.deepEqual(JSON.parse(await okText(owner, 'get_agent_memory', { session_id: theirs.sessionId })), {
      status: 'error',
      message: `Session ${theirs.sessionId} not found.`,
    });
    const them = await f.connect(other.token);
    assert.match(
      await okText(them, 'session_list'),
      new RegExp(
        `^Found 1 session\\(s\\):\\n\\n- \\*\\*stranger\\*\\* \\[IDLE\\] — -\\n  session: \`${theirs.sessionId}\``,
      ),
    );
    assert.doesNotMatch(await okText(owner, 'session_list'), /stranger/);
  });
});
