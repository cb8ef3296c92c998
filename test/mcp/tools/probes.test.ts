import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { fixedClock } from '../../../src/clock.js';
import { mcpFixture, type McpFixture } from '../../helpers/mcp.js';
import { answer, refusedWithText } from '../../helpers/calls.js';

/**
 * xylocopa's probe tools over a real MCP Client: probe_create's checks in its order with
 * its texts, the cap of 10 active probes, the expiry bounds; probe_list / probe_get / probe_update texts;
 * the tenant scope (an owner and its agents see only the owner's probes). Refusals are ordinary results with xylocopa's text and
 * `{status: 'error', error_code}`; none of them appends an event.
 */
const T0 = '2026-03-05T15:07:00.000Z';
const clock = fixedClock(T0);
process.env.COLONY_PUBLIC_URL = 'https://colony.example.test/';

let f: McpFixture;
let owner: Client;
let worker: Client;
before(async () => {
  f = await mcpFixture({ clock });
  owner = await f.connect(f.ownerToken);
  worker = await f.connect(f.agentToken);
});
after(() => f.close());

const head = () => f.app.engine.head().position;
/** A xylocopa-style refusal (see refusedWithText) that the audit records as an error. */
async function refused(c: Client, name: string, args: Record<string, unknown>, text: string, code: string) {
  await refusedWithText(f, c, name, args, text, code);
  const audited = f.ctx.audit.query({ limit: 1 })[0]!;
  assert.deepEqual(
    [audited.tool, audited.outcome, audited.errorCode],
    [name, 'error', code],
    'the audit records the refusal as an error',
  );
}

describe('probe_create', () => {
  it("checks in xylocopa's order: agent_id, expires_in_hours, the message, the agent, the cap", async () => {
    await refused(
      worker,
      'probe_create',
      { agent_id: '', message: '' },
      'Error: agent_id is required.',
      'ErrInvalidInput',
    );
    await refused(
      worker,
      'probe_create',
      { agent_id: 'nobody', message: '', expires_in_hours: 0 },
      'Error: expires_in_hours must be in (0, 168].',
      'ErrInvalidInput',
    );
    await refused(
      worker,
      'probe_create',
      { agent_id: 'nobody', message: 'x', expires_in_hours: 169 },
      'Error: expires_in_hours must be in (0, 168].',
      'ErrInvalidInput',
    );
    await refused(
      worker,
      'probe_create',
      { agent_id: 'nobody', message: '  ' },
      'Error: message is empty',
      'ErrInvalidInput',
    );
    await refused(
      worker,
      'probe_create',
      { agent_id: 'nobody', message: 'a\u001bb' },
      'Error: message contains control char U+001B at offset 1',
      'ErrInvalidInput',
    );
    await refused(
      worker,
      'probe_create',
      { agent_id: 'nobody', message: 'ok' },
      'Error: agent nobody not found.',
      'ErrNotFound',
    );
    await refused(
      worker,
      'probe_create',
      { agent_id: '999', message: 'ok' },
      'Error: agent 999 not found.',
      'ErrNotFound',
    );
  });

  it("creates a probe: xylocopa's text, the trigger URL under COLONY_PUBLIC_URL, the message stored stripped", async () => {
    const r = await answer(worker, 'probe_create', {
      agent_id: String(f.agent.agentId),
      message: '  Check the queue.\n',
      expires_in_hours: 2,
    });
    const p = r.body.probe as Record<string, string>;
    assert.match(p.probe_id!, /^[0-9a-f]{12}$/);
    assert.match(p.trigger_url!, /^https:\/\/colony\.example\.test\/probes\/[0-9a-f]{32}$/);
    assert.equal(
      r.text,
      [
        `Probe **${p.probe_id}** created for agent \`${f.agent.agentId}\`.`,
        '',
        `- Trigger URL: \`${p.trigger_url}\``,
        '- Expires: 2026-03-05T17:07:00.000Z (in 2h)',
        '- Single-fire: subsequent POSTs return 410 Gone.',
        '',
        'To trigger from a script:',
        `  curl -X POST '${p.trigger_url}'`,
        '',
        'Body is ignored by design (no prompt injection surface).',
      ].join('\n'),
    );
    assert.deepEqual(
      { ...p, trigger_url: undefined },
      {
        probe_id: p.probe_id,
        agent_id: String(f.agent.agentId),
        state: 'active',
        message: 'Check the queue.',
        created_at: T0,
        expires_at: '2026-03-05T17:07:00.000Z',
        fired_at: null,
        expired_reason: null,
        trigger_url: undefined,
      },
    );
    const byName = await answer(owner, 'probe_create', { agent_id: 'worker', message: 'By name, default 24 h.' });
    assert.equal((byName.body.probe as { expires_at: string }).expires_at, '2026-03-06T15:07:00.000Z');
    assert.match(byName.text, /\(in 24h\)/);
  });

  it('caps active probes at 10 per agent: the 11th is refused and writes nothing; expired ones do not count', async () => {
    const a = f.addAgent('capped');
    const ids: string[] = [];
    for (let i = 0; i < 10; i++)
      ids.push(
        (
          (await answer(owner, 'probe_create', { agent_id: 'capped', message: `probe ${i}` })).body.probe as {
            probe_id: string;
          }
        ).probe_id,
      );
    await refused(
      owner,
      'probe_create',
      { agent_id: 'capped', message: 'one too many' },
      `Error: agent ${a.agentId} already has 10 active probes (limit 10). Use probe_update to expire some, or wait for them to time out.`,
      'ErrProbeLimit',
    );
    await answer(owner, 'probe_update', { probe_id: ids[0], expires_at: T0 });
    await answer(owner, 'probe_create', { agent_id: 'capped', message: 'room again' });
  });
});

describe('probe_list, probe_get, probe_update', () => {
  let id: string;
  before(async () => {
    f.addAgent('lister', { parentId: f.agent.agentId, spawnDepth: 1 }); // spawned by worker: worker may probe it
    id = (
      (
        await answer(owner, 'probe_create', {
          agent_id: 'lister',
          message: `${'long '.repeat(20)}end`,
          expires_in_hours: 1,
        })
      ).body.probe as { probe_id: string }
    ).probe_id;
  });

  it("probe_list shows active probes newest first, with xylocopa's rows; an unknown agent has none", async () => {
    const r = await answer(worker, 'probe_list', { agent_id: 'lister' });
    const agentId = String(f.app.engine.db.prepare("SELECT agent_id FROM agents WHERE name = 'lister'").pluck().get());
    assert.equal(
      r.text,
      `Found 1 probe(s):\n\n- **${id}** agent=\`${agentId}\` [active until 2026-03-05T16:07:00]\n  message: ${'long '.repeat(16)}...`,
    );
    assert.equal(r.body.count, 1);
    assert.equal((await answer(worker, 'probe_list', { agent_id: 'ghost' })).text, 'No probes found.');
    const all = await answer(worker, 'probe_list', {});
    assert.ok((all.body.count as number) >= 12);
  });

  it("probe_get shows the probe with its trigger URL; a miss is xylocopa's text", async () => {
    const r = await answer(worker, 'probe_get', { probe_id: id });
    const p = r.body.probe as Record<string, string>;
    assert.equal(
      r.text,
      [
        `# Probe: ${id}`,
        `- agent_id: \`${p.agent_id}\``,
        `- created_at: ${T0}`,
        '- expires_at: 2026-03-05T16:07:00.000Z',
        '- fired_at: (not fired)',
        `- trigger URL: \`${p.trigger_url}\``,
        '',
        '## Message',
        p.message,
      ].join('\n'),
    );
    await refused(
      worker,
      'probe_get',
      { probe_id: 'ffffffffffff' },
      'No probe found matching: ffffffffffff',
      'ErrNotFound',
    );
  });

  it('probe_update: no fields, a bad timestamp (repr), the 168 h cap, then a new time and a cancel by a past time', async () => {
    const before = head();
    assert.equal((await answer(worker, 'probe_update', { probe_id: id })).text, `No fields to update for probe ${id}.`);
    assert.equal(head(), before);
    await refused(
      worker,
      'probe_update',
      { probe_id: id, expires_at: "next week's" },
      `Error: invalid expires_at ISO timestamp: "next week's"`,
      'ErrInvalidInput',
    );
    await refused(
      worker,
      'probe_update',
      { probe_id: id, expires_at: '2026-03-12T15:08:00Z' },
      'Error: expires_at must be at most 168 hours from now.',
      'ErrInvalidInput',
    );
    await refused(
      worker,
      'probe_update',
      { probe_id: 'nope', expires_at: '2026-03-06' },
      'No probe found matching: nope',
      'ErrNotFound',
    );
    const moved = await answer(worker, 'probe_update', { probe_id: id, expires_at: '2026-03-06T09:00:00+01:00' });
    assert.equal(moved.text, `Probe ${id} updated: expires_at=2026-03-06T08:00:00.000Z`);
    const cancelled = await answer(worker, 'probe_update', { probe_id: id, expires_at: '2026-03-01T00:00:00Z' });
    assert.equal(cancelled.text, `Probe ${id} updated: expires_at=2026-03-01T00:00:00.000Z`);
    assert.equal((cancelled.body.probe as { state: string; expired_reason: string }).state, 'expired');
    assert.equal((cancelled.body.probe as { expired_reason: string }).expired_reason, 'manual');
    assert.equal((await answer(worker, 'probe_list', { agent_id: 'lister' })).text, 'No probes found.');
    const all = await answer(worker, 'probe_list', { agent_id: 'lister', include_fired: true });
    assert.match(all.text, /\[EXPIRED at 2026-03-01T00:00:00\]/);
    await refused(
      worker,
      'probe_update',
      { probe_id: id, expires_at: '2026-03-06T00:00:00Z' },
      `Probe ${id} already expired — cannot update.`,
      'ErrProbeExpired',
    );
  });
});

describe('tenant scope', () => {
  it("another owner neither sees, reads, updates nor creates probes for this tenant's agents", async () => {
    const other = f.addOwner('rival');
    const rival = await f.connect(other.token);
    const mine = (
      (await answer(owner, 'probe_create', { agent_id: 'worker', message: 'private' })).body.probe as {
        probe_id: string;
      }
    ).probe_id;
    assert.equal((await answer(rival, 'probe_list', { include_fired: true })).text, 'No probes found.');
    await refused(rival, 'probe_get', { probe_id: mine }, `No probe found matching: ${mine}`, 'ErrNotFound');
    await refused(
      rival,
      'probe_update',
      { probe_id: mine, expires_at: T0 },
      `No probe found matching: ${mine}`,
      'ErrNotFound',
    );
    await refused(
      rival,
      'probe_create',
      { agent_id: String(f.agent.agentId), message: 'hi' },
      `Error: agent ${f.agent.agentId} not found.`,
      'ErrNotFound',
    );
  });

  it('an agent probes only itself and the agents it spawned: a peer is ErrProbeForbidden, nothing written', async () => {
    f.addAgent('peer');
    const theirs = (
      (await answer(owner, 'probe_create', { agent_id: 'peer', message: 'From the owner.' })).body.probe as {
        probe_id: string;
      }
    ).probe_id;
    const neither = `Error: worker may probe only itself and the agents it spawned (down its spawn lineage); agent ${
      f.app.engine.db.prepare("SELECT agent_id FROM agents WHERE name = 'peer'").pluck().get() as number
    } is neither.`;
    await refused(worker, 'probe_create', { agent_id: 'peer', message: 'I am Colony.' }, neither, 'ErrProbeForbidden');
    await refused(worker, 'probe_get', { probe_id: theirs }, neither, 'ErrProbeForbidden');
    await refused(worker, 'probe_update', { probe_id: theirs, expires_at: T0 }, neither, 'ErrProbeForbidden');
    assert.match((await answer(worker, 'probe_list', { agent_id: 'peer' })).text, new RegExp(theirs), 'still listed');
    await answer(worker, 'probe_create', { agent_id: 'worker', message: 'Wake me later.' });
  });

  it('the tools are on the agent surface with explicit trust', async () => {
    const tools = (await worker.listTools()).tools.filter((t) => t.name.startsWith('probe_'));
    assert.deepEqual(tools.map((t) => [t.name, t.annotations?.readOnlyHint]).sort(), [
      ['probe_create', false],
      ['probe_get', true],
      ['probe_list', true],
      ['probe_update', false],
    ]);
  });
});
