import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { colony, colonyFails, stdioClient } from '../helpers/cli.js';
import { tempDir } from '../../testkit/temp-dir.js';
import { ok } from '../helpers/calls.js';
import { callTool, watchResults } from '../helpers/mcp.js';

/**
 * Spawned agents through the real CLI on a real data dir:
 * `colony approve ID` materializes an agent proposal made over `colony stdio`, `colony reject ID --reason`
 * DMs the reason, `colony agents show NAME` shows what was created, and `colony agents token NAME
 * [--rotate] [--json]` is the owner's only way to the token: it authenticates, it never appears in a
 * message, a tool result or the database's bytes, and --rotate revokes the old one.
 */
type Body = Record<string, unknown>;
type Msg = { message_id: number; from: string; body: string; metadata: Body | null; reactions: Body[] };
const scratch = tempDir('colony-cli-agents-token-');
after(() => scratch.cleanup());

function json(dir: string, args: string[]): Body {
  const r = colony([...args, '--data', dir, '--json']);
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout) as Body;
}

/** Every MCP result seen here, serialized: the token must never be in one. */
const transcript: string[] = [];
const clients: Client[] = [];
/** A `colony stdio` client whose every result goes into the transcript; closed after the suite. */
async function connect(dir: string, token: string): Promise<Client> {
  const client = watchResults(await stdioClient(dir, token), (r) => transcript.push(JSON.stringify(r)));
  clients.push(client);
  return client;
}

const DESCRIPTION = 'Keep every page of the documentation site accurate against the code.';
const PROMPT = 'You write reference documentation for one module at a time, precisely and briefly.';

describe("agent proposals decided from the CLI, and the spawned agent's token", () => {
  let dir: string;
  let owner: Client;
  let lead: Client;
  let leadId: number;
  let goalId: number;
  let taskId: number;
  let writerId: number;
  let token: string;
  const proposal = (name: string, extra: Body = {}): Body => ({
    goal_id: goalId,
    parent_task_id: taskId,
    name,
    model: 'claude-sonnet-4-5',
    system_prompt: `${PROMPT} You are ${name}.`,
    tool_scope: ['whoami', 'read_inbox', 'get_channel_messages'],
    autonomy_tier: 'assisted',
    reason: 'The module needs a dedicated writer.',
    ...extra,
  });

  before(async () => {
    dir = join(scratch.dir, 'data');
    const init = colony(['init', '--data', dir, '--json']);
    assert.equal(init.code, 0, init.stderr);
    owner = await connect(dir, JSON.parse(init.stdout).token as string);
    const promptFile = join(scratch.dir, 'lead.txt');
    writeFileSync(promptFile, 'You lead the documentation team and propose specialists.');
    const created = json(dir, [
      'agents',
      'create',
      'lead',
      '--model',
      'claude-sonnet-4-5',
      '--prompt-file',
      promptFile,
      '--tier',
      'assisted',
      '--tools',
      'propose_agent,read_inbox,whoami,get_channel_messages,send_message',
    ]);
    leadId = created.id as number;
    lead = await connect(dir, created.token as string);

    goalId = (await ok(owner, 'create_goal', { title: 'Document the API', description: DESCRIPTION }))
      .goal_id as number;
    const tree = await ok(owner, 'propose_task_tree', {
      goal_id: goalId,
      tree: { title: 'Write the API reference', description: 'One page per endpoint, with examples.' },
    });
    await ok(owner, 'react', { message_id: tree.proposal_message_id as number, reaction: 'approve' });
    taskId = ((await ok(owner, 'get_goal', { goal_id: goalId })).tasks_tree as { id: number }[])[0]!.id;
  });
  after(async () => {
    for (const c of clients.splice(0)) await c.close();
  });

  it('`colony approve ID` on an agent proposal creates the agent', async () => {
    const p = await ok(lead, 'propose_agent', proposal('cli-writer'));
    assert.equal(p.status, 'pending');
    colonyFails(dir, ['agents', 'show', 'cli-writer'], /^colony: agent cli-writer not found$/);

    const r = json(dir, ['approve', String(p.proposal_id)]);
    assert.equal(r.proposal_id, p.proposal_id);
    assert.equal(r.status, 'approved');
    assert.deepEqual(r.task_ids, []);
    writerId = r.agent_id as number;
    assert.ok(Number.isInteger(writerId), `the new agent's id: ${JSON.stringify(r)}`);

    const shown = json(dir, ['agents', 'show', 'cli-writer']);
    assert.deepEqual(
      [shown.id, shown.name, shown.parent_agent_id, shown.spawn_depth, shown.autonomy_tier],
      [writerId, 'cli-writer', leadId, 1, 'assisted'],
    );
    assert.match(shown.config_hash as string, /^[0-9a-f]{64}$/);
    assert.deepEqual(shown.tool_scope, ['get_channel_messages', 'read_inbox', 'whoami']);
    const rep = shown.reputation as {
      rolling_score: number;
      evidence_count: number;
      domains: { domain: string; score: number; evidence_count: number }[];
    };
    assert.equal(rep.evidence_count, 1, 'one seed row');
    assert.deepEqual(
      rep.domains.map((d) => [d.domain, d.evidence_count]),
      [['default', 1]],
    );
    assert.ok(Math.abs(rep.rolling_score - 0.35) <= 0.0035, `0.7 × the root parent's 0.5, ±1 %: ${rep.rolling_score}`);
    assert.doesNotMatch(JSON.stringify(shown), /colony_/, 'agents show never prints a token');

    const text = colony(['agents', 'show', 'cli-writer', '--data', dir]);
    assert.equal(text.code, 0, text.stderr);
    assert.match(
      text.stdout,
      new RegExp(`^cli-writer \\(id ${writerId}\\) {2}assisted {2}claude-sonnet-4-5 {2}active$`, 'm'),
    );
    assert.match(text.stdout, new RegExp(`^config hash [0-9a-f]{64} {2}spawn depth 1 {2}parent ${leadId}$`, 'm'));
    assert.match(text.stdout, /^ {2}default: 0\.350 \(1\)$/m);

    const dm = ((await ok(lead, 'read_inbox')).messages as Msg[]).find(
      (m) => m.metadata?.event === 'ProposalApproved' && m.metadata?.agent_id === writerId,
    );
    assert.ok(dm, 'the proposer is DMed');
    assert.match(dm.body, /"cli-writer"/);
    assert.match(dm.body, new RegExp(`id ${writerId}\\b`));
    const msg = ((await ok(owner, 'get_channel_messages', { channel_name: 'approvals' })).messages as Msg[]).find(
      (m) => m.message_id === p.approval_message_id,
    )!;
    assert.deepEqual(
      msg.reactions,
      [{ reaction: 'approve', by: 'owner' }],
      'the CLI decision shows on the proposal message',
    );
  });

  it('the text output names the created agent', async () => {
    const p = await ok(lead, 'propose_agent', proposal('cli-helper'));
    const r = colony(['approve', String(p.proposal_id), '--data', dir]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      new RegExp(`^Approved proposal ${p.proposal_id as number}: created agent cli-helper \\(id \\d+\\)\\n$`),
    );
  });

  it('`colony reject ID --reason R` creates nothing and DMs the proposer the reason', async () => {
    const p = await ok(lead, 'propose_agent', proposal('cli-rejected'));
    const r = colony([
      'reject',
      String(p.proposal_id),
      '--reason',
      'One writer is enough for this goal',
      '--data',
      dir,
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `Rejected proposal ${p.proposal_id as number}; the proposer was told why\n`);
    colonyFails(dir, ['agents', 'show', 'cli-rejected'], /agent cli-rejected not found/);
    const dm = ((await ok(lead, 'read_inbox')).messages as Msg[]).find(
      (m) => m.metadata?.event === 'ProposalRejected' && m.metadata?.proposal_id === p.proposal_id,
    );
    assert.ok(dm, 'the proposer is DMed');
    assert.match(dm.body, /One writer is enough for this goal/);
    const tree = (await ok(owner, 'get_goal', { goal_id: goalId })).tasks_tree as {
      id: number;
      status: string;
      assignee: unknown;
    }[];
    assert.deepEqual(
      [tree[0]!.status, tree[0]!.assignee ?? null],
      ['approved', null],
      'the linked task stays approved and unassigned',
    );
  });

  it('the second of two same-name proposals fails at approval with ErrAgentNameTaken and stays pending', async () => {
    const first = await ok(lead, 'propose_agent', proposal('cli-twin'));
    const second = await ok(
      lead,
      'propose_agent',
      proposal('cli-twin', { reason: 'A second alternative for the same job.' }),
    );
    assert.equal(json(dir, ['approve', String(first.proposal_id)]).status, 'approved');
    colonyFails(dir, ['approve', String(second.proposal_id)], /^colony: ErrAgentNameTaken: /);
    const msg = ((await ok(owner, 'get_channel_messages', { channel_name: 'approvals' })).messages as Msg[]).find(
      (m) => m.message_id === second.approval_message_id,
    )!;
    assert.deepEqual(msg.reactions, [], 'still undecided');
    assert.equal(
      json(dir, ['reject', String(second.proposal_id), '--reason', 'The name is taken']).status,
      'rejected',
      'still pending, so it can be rejected',
    );
  });

  it("`colony agents token NAME --json` prints {id, name, token}; the token authenticates, within the agent's scope only", async () => {
    const out = json(dir, ['agents', 'token', 'cli-writer']);
    assert.deepEqual(Object.keys(out).sort(), ['id', 'name', 'token']);
    assert.deepEqual([out.id, out.name], [writerId, 'cli-writer']);
    token = out.token as string;
    assert.match(token, /^colony_[A-Za-z0-9_-]{43}$/);
    const plain = colony(['agents', 'token', 'cli-writer', '--data', dir]);
    assert.equal(plain.code, 0, plain.stderr);
    assert.equal(plain.stdout, `${token}\n`, 'revealing does not change it');

    const writer = await connect(dir, token);
    const me = await ok(writer, 'whoami');
    assert.deepEqual([me.kind, me.id, me.name], ['agent', writerId, 'cli-writer']);
    await ok(writer, 'get_channel_messages', { channel_name: 'approvals' });
    for (const [tool, args] of [
      ['send_message', { channel: 'approvals', body: 'hi' }],
      ['propose_agent', proposal('cli-grandchild')],
    ] as const) {
      const r = await callTool(writer, tool, args);
      assert.equal(r.result.isError, true, tool);
      assert.match(r.text, /^ErrToolNotInScope: /, tool);
    }
    colonyFails(dir, ['agents', 'token', 'no-such-agent'], /^colony: agent no-such-agent not found$/);
  });

  it('the token never appears in a message, a tool result, or the bytes of the data dir', async () => {
    const messages = [
      ...((await ok(owner, 'get_channel_messages', { channel_name: 'approvals', limit: 200 })).messages as Msg[]),
      ...((await ok(lead, 'read_inbox', { include_read: true, limit: 200 })).messages as Msg[]),
      ...((await ok(owner, 'read_inbox', { include_read: true, limit: 200 })).messages as Msg[]),
    ];
    assert.ok(messages.length >= 6);
    assert.ok(!JSON.stringify(messages).includes(token), 'not in any message');
    assert.ok(!transcript.join('\n').includes(token), 'not in any MCP result');
    const db = new Database(join(dir, 'colony.db'), { readonly: true });
    try {
      const rows = JSON.stringify(db.prepare('SELECT * FROM messages').all());
      assert.ok(!rows.includes(token), 'not in the messages table');
    } finally {
      db.close();
    }
    const files = readdirSync(dir).filter((n) => statSync(join(dir, n)).isFile());
    assert.ok(files.includes('colony.db'), files.join());
    for (const name of files) assert.equal(readFileSync(join(dir, name)).indexOf(token), -1, `not in ${name}`);
  });

  it('`--rotate` revokes the old token (a live session and a new one both fail) and issues a new one that works', async () => {
    const live = clients.at(-1)!;
    const r = json(dir, ['agents', 'token', 'cli-writer', '--rotate']);
    assert.deepEqual([r.id, r.name], [writerId, 'cli-writer']);
    const rotated = r.token as string;
    assert.match(rotated, /^colony_/);
    assert.notEqual(rotated, token);

    const stale = await callTool(live, 'whoami');
    assert.equal(stale.result.isError, true, 'the running session lost its rights at once');
    assert.match(stale.text, /^ErrUnauthorized: /);
    const refused = colony(['stdio', '--data', dir], { COLONY_TOKEN: token });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /ErrUnauthorized: COLONY_TOKEN is missing, unknown or revoked/);

    const fresh = await connect(dir, rotated);
    assert.equal((await ok(fresh, 'whoami')).name, 'cli-writer');
    assert.equal(json(dir, ['agents', 'token', 'cli-writer']).token, rotated, 'revealing now gives the new token');
    for (const name of readdirSync(dir).filter((n) => statSync(join(dir, n)).isFile())) {
      assert.equal(readFileSync(join(dir, name)).indexOf(rotated), -1, `the new token is not in ${name}`);
    }
  });

  it('`agents token --help` documents --rotate and --json', () => {
    const r = colony(['agents', 'token', '--help']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Usage: colony agents token/);
    assert.match(r.stdout, /--rotate/);
    assert.match(r.stdout, /--json/);
  });
});
