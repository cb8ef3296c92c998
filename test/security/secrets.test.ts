import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { setSecret } from '../../src/actions/secrets.js';
import { CommandVerifier } from '../../src/runtime/verifier.js';
import { COLONY_BIN } from '../helpers/cli.js';
import { auditJournal } from '../helpers/audit-journal.js';
import { callTool, mcpFixture, textOf } from '../helpers/mcp.js';

/**
 * A security scan for secrets: after secrets are set (CLI argument, CLI stdin, the action),
 * replaced, requested, listed, used by a command verifier that prints them, and revoked, no plaintext
 * appears in the bytes of colony.db and its WAL, the audit db and its WAL, any MCP result, or any CLI
 * output (set, list, events tail). Values are short, so a stored copy would sit whole inside one page.
 */
delete process.env.COLONY_ALLOWED_ROOTS;
type Body = Record<string, unknown>;

describe('no secret value is ever stored or shown', () => {
  it('scans the database files, the audit trail, MCP results and CLI output for every plaintext', async (t) => {
    const f = await mcpFixture();
    t.after(() => f.close());
    const plain = (label: string) => `${label}-${randomBytes(12).toString('hex')}-é`;
    const values = {
      arg: plain('arg'),
      stdin: plain('stdin'),
      replaced: plain('old'),
      action: plain('action'),
      revoked: plain('revoked'),
    };
    const seen: string[] = [];
    const call = async (c: Client, name: string, args: Body = {}): Promise<Body> => {
      const { result, body } = await callTool(c, name, args);
      seen.push(JSON.stringify(result));
      assert.ok(!result.isError, `${name}: ${textOf(result)}`);
      return body;
    };
    const cli = (args: string[], input?: string) => {
      const r = spawnSync(process.execPath, [COLONY_BIN, ...args, '--data', f.dataDir], {
        input,
        encoding: 'utf8',
        env: { ...process.env, COLONY_DATA: '' },
        timeout: 60_000,
      });
      seen.push(r.stdout, r.stderr);
      assert.equal(r.status, 0, r.stderr);
      return r.stdout;
    };

    const owner = await f.connect(f.ownerToken);
    const worker = await f.connect(f.agentToken);
    const verifier = new CommandVerifier(f.app).start();
    t.after(() => verifier.stop());
    // The recipe is granted the user-scope TEAM_KEY; the task's STDIN_KEY reaches it anyway; the agent's ARG_KEY never does.
    const cmd = 'for v in "$ARG_KEY" "$STDIN_KEY" "$TEAM_KEY"; do echo "value: $v"; echo "err: $v" >&2; done';
    await call(owner, 'add_verifier', { name: 'print-keys', command: cmd, secrets: ['TEAM_KEY'] });
    const g = await call(owner, 'create_goal', {
      title: 'Secret scan',
      description: 'Everything that touches a secret, once.',
    });
    const p = await call(owner, 'propose_task_tree', {
      goal_id: g.goal_id,
      tree: {
        title: 'Use the keys',
        description: 'Print them (the tail is redacted).',
        verifier_config: { kind: 'command', recipe: 'print-keys' },
      },
    });
    await call(owner, 'react', { message_id: p.proposal_message_id, reaction: 'approve' });
    const taskId = ((await call(owner, 'get_goal', { goal_id: g.goal_id })).tasks_tree as { id: number }[])[0]!.id;

    await call(worker, 'request_resource', {
      name: 'arg_key',
      resource_type: 'api_key',
      reason: 'call the API',
      task_id: taskId,
    });
    cli(['secrets', 'set', 'ARG_KEY', values.replaced, '--scope', 'agent:worker']);
    cli(['secrets', 'set', 'ARG_KEY', values.arg, '--scope', 'agent:worker', '--json']);
    cli(['secrets', 'set', 'STDIN_KEY', '-', '--scope', `task:${taskId}`], `${values.stdin}\n`);
    const by = { key: `user-${f.owner.userId}`, name: 'owner', tenant: f.owner.userId };
    setSecret(f.app, by, { name: 'TEAM_KEY', value: values.action, scope: 'user:owner' }, { actor: 'user:owner' });
    const doomed = setSecret(
      f.app,
      by,
      { name: 'DOOMED', value: values.revoked, scope: 'user:owner' },
      { actor: 'user:owner' },
    );
    const ask = await call(owner, 'revoke_secret', { secret_id: doomed.secretId });
    await call(owner, 'revoke_secret', { secret_id: doomed.secretId, confirmation_token: ask.confirm_token });

    await call(worker, 'list_resources', { task_id: taskId });
    await call(owner, 'list_resources', { task_id: taskId });
    await call(worker, 'read_inbox', { include_read: true });
    await call(worker, 'claim_task', { task_id: taskId });
    await call(worker, 'complete_task', { task_id: taskId, summary: 'printed them' });
    await verifier.idle();
    const snap = await call(owner, 'get_goal', { goal_id: g.goal_id });
    const leaf = (snap.tasks_tree as Body[])[0]!;
    assert.equal(leaf.status, 'done');
    assert.equal(
      (leaf.verifier_output as string).match(/\*\*\*/g)?.length,
      4,
      'the two values it was given printed twice each, each redacted',
    );
    assert.match(leaf.verifier_output as string, /^value: \n/m, 'the agent-scope ARG_KEY never reached the verifier');
    await call(owner, 'get_channel_messages', { channel_name: 'requests' });
    await call(owner, 'search_messages', { query: 'ARG_KEY' });
    cli(['secrets', 'list']);
    cli(['secrets', 'list', '--all', '--json']);
    cli(['events', 'tail', '-n', '1000', '--json']);

    const files = ['colony.db', 'colony.db-wal', 'audit.db', 'audit.db-wal', ...auditJournal(f.dataDir)]
      .map((n) => join(f.dataDir, n))
      .filter((p) => existsSync(p));
    assert.ok(
      files.some((p) => p.endsWith('colony.db-wal')) && files.some((p) => p.endsWith('audit.db')),
      files.join(', '),
    );
    const bytes = files.map((p) => [p, readFileSync(p)] as const);
    assert.ok(
      bytes.some(([, b]) => b.includes('ARG_KEY')),
      'the scan reads real content: the names are there',
    );
    for (const [label, value] of Object.entries(values)) {
      for (const [p, b] of bytes)
        assert.ok(!b.includes(Buffer.from(value, 'utf8')), `${label} plaintext found in ${p}`);
      seen.forEach((out, i) =>
        assert.ok(!out.includes(value), `${label} plaintext in output #${i}: ${out.slice(0, 200)}`),
      );
    }
  });
});
