import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as z from 'zod';
import { createOwner } from '../../src/actions/principals.js';
import { openDatabase } from '../../src/engine/db.js';
import { CONFIRMATION_TTL_MS } from '../../src/mcp/confirm.js';
import { ToolRegistry } from '../../src/mcp/registry.js';
import { defineTool } from '../../src/mcp/tool.js';
import { buildToolRegistry } from '../../src/mcp/tools/index.js';
import { cardDecider, cardStream } from '../../testkit/cards.js';
import { httpFixture, type HttpFixture } from '../helpers/mcp-http.js';

/**
 * The call pipeline through real SDK clients over HTTP, with a few tools defined here on top of the
 * product's: a write tool that appends events, two destructive owner tools, one that fails unexpectedly.
 */
const seen: string[] = [];
const openCard = defineTool({
  name: 'open_test_card',
  title: 'Open a test card',
  description: 'Opens a card (test tool).',
  trust: 'write',
  surface: 'agent',
  module: 'test',
  input: z.strictObject({
    title: z.string().min(3),
    column: z.enum(['todo', 'doing']),
    notes_path: z.string().optional(),
  }),
  output: z.object({ card_id: z.number().int() }),
  handler(ctx, args) {
    if (args.notes_path) seen.push(args.notes_path);
    const id = ctx.app.engine.transact(ctx.command, (uow) => {
      const cardId = uow.ids.next('card');
      ctx.app.engine.handle(
        cardDecider,
        cardStream(cardId),
        { type: 'OpenCard', cardId, title: args.title, column: args.column },
        ctx.command,
      );
      return cardId;
    }).value!;
    return { card_id: id };
  },
});
const destructive = (name: string) =>
  defineTool({
    name,
    title: name,
    description: 'A destructive owner tool (test).',
    trust: 'destructive',
    surface: 'owner',
    module: 'test',
    input: z.strictObject({ card_id: z.number().int() }),
    output: z.object({ done: z.number().int() }),
    handler: (_ctx, args) => {
      seen.push(`${name}:${args.card_id}`);
      return { done: args.card_id };
    },
  });
const explode = defineTool({
  name: 'explode',
  title: 'Explode',
  description: 'Fails with an unexpected error (test).',
  trust: 'read',
  surface: 'agent',
  module: 'test',
  input: z.strictObject({}),
  output: z.object({ never: z.string() }),
  handler: () => {
    throw new Error('secret internals /etc/passwd');
  },
});

let now = 1_000_000;
let f: HttpFixture;
before(async () => {
  const tools = new ToolRegistry().register(
    ...buildToolRegistry().list(),
    openCard,
    destructive('shred_card'),
    destructive('burn_card'),
    explode,
  );
  f = await httpFixture({ tools, agentTools: ['whoami', 'open_test_card', 'explode'], now: () => now });
});
after(() => f.close());

const lastAudit = () => f.ctx.audit.query({ limit: 1 })[0]!;
const text = (r: unknown) => (r as { content: { text: string }[] }).content[0]!.text;

describe('tools/list', () => {
  it('shows the owner every tool with its annotations, a strict input schema and an output schema', async () => {
    const { tools } = await (await f.connect(f.ownerToken)).listTools();
    const shred = tools.find((t) => t.name === 'shred_card')!;
    assert.deepEqual(shred.annotations, {
      title: 'shred_card',
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: false,
    });
    assert.equal(shred.inputSchema.additionalProperties, false);
    assert.ok(
      'confirmation_token' in (shred.inputSchema.properties ?? {}),
      'destructive tools advertise confirmation_token',
    );
    assert.ok(shred.outputSchema?.anyOf);
    const who = tools.find((t) => t.name === 'whoami')!;
    assert.deepEqual([who.annotations?.readOnlyHint, who.annotations?.idempotentHint], [true, true]);
    for (const t of tools) assert.ok(t.description && t.description.length > 20, `${t.name} has a description`);
  });

  it('shows an agent exactly the tools in its scope: no owner tool, no agent tool outside it', async () => {
    const names = (await (await f.connect(f.agentToken)).listTools()).tools.map((t) => t.name);
    assert.deepEqual(names, ['explode', 'open_test_card', 'whoami']);
  });
});

describe('refusals write nothing and leave one audit row', () => {
  it('refuses unknown keys, wrong types and missing fields with ErrInvalidInput', async () => {
    const agent = await f.connect(f.agentToken);
    for (const args of [
      { title: 'Fine title', column: 'todo', extra: 1 },
      { title: 42, column: 'todo' },
      { column: 'todo' },
      { title: 'Fine', column: 'later' },
    ]) {
      const events = f.eventCount();
      const audited = f.ctx.audit.count();
      const r = await agent.callTool({ name: 'open_test_card', arguments: args });
      assert.equal(r.isError, true, JSON.stringify(args));
      assert.match(text(r), /^ErrInvalidInput: invalid arguments for open_test_card: /);
      assert.equal((r.structuredContent as { error: { code: string } }).error.code, 'ErrInvalidInput');
      assert.equal(f.eventCount(), events, 'nothing appended');
      assert.equal(f.ctx.audit.count(), audited + 1, 'one audit row');
      assert.deepEqual(
        [lastAudit().outcome, lastAudit().errorCode, lastAudit().principal],
        ['error', 'ErrInvalidInput', 'agent:worker'],
      );
    }
  });

  it("blocks a call outside the agent's tool scope with ErrToolNotInScope", async () => {
    const narrow = await httpFixture({ agentTools: ['list_agent_capabilities'] });
    try {
      const r = await (await narrow.connect(narrow.agentToken)).callTool({ name: 'whoami', arguments: {} });
      assert.equal(r.isError, true);
      assert.equal(
        text(r),
        'ErrToolNotInScope: whoami is not in the tool scope of agent worker; the owner can add it: colony agents update worker --tools list_agent_capabilities,whoami',
      );
      assert.deepEqual(
        [narrow.ctx.audit.query({ limit: 1 })[0]!.outcome, narrow.ctx.audit.query({ limit: 1 })[0]!.errorCode],
        ['blocked', 'ErrToolNotInScope'],
      );
    } finally {
      await narrow.close();
    }
  });

  it('lets a quarantined agent call read tools only (ErrAgentQuarantined)', async () => {
    // The quarantine event arrives with the agents issue; here the read model is set the way its projection
    // will, from another connection (as another process would: the server must notice without a restart).
    const other = openDatabase(join(f.app.dataDir, 'colony.db'));
    other.prepare('UPDATE agents SET quarantined = 1 WHERE agent_id = ?').run(f.agentId);
    try {
      const agent = await f.connect(f.agentToken);
      assert.equal(
        ((await agent.callTool({ name: 'whoami', arguments: {} })).structuredContent as { quarantined: boolean })
          .quarantined,
        true,
      );
      const events = f.eventCount();
      const r = await agent.callTool({ name: 'open_test_card', arguments: { title: 'Blocked card', column: 'todo' } });
      assert.match(text(r), /^ErrAgentQuarantined: /);
      assert.equal(f.eventCount(), events);
      assert.equal(lastAudit().outcome, 'blocked');
    } finally {
      other.prepare('UPDATE agents SET quarantined = 0 WHERE agent_id = ?').run(f.agentId);
      other.close();
    }
  });

  it('refuses a path outside the allowed roots before the tool runs (ErrPathOutsideRoots)', async () => {
    const agent = await f.connect(f.agentToken);
    const workspace = join(f.app.dataDir, 'workspace');
    mkdirSync(join(workspace, 'notes'), { recursive: true });
    symlinkSync('/etc', join(workspace, 'escape'));
    const events = f.eventCount();
    for (const notes_path of ['/etc/passwd', `${workspace}/../secrets.key`, join(workspace, 'escape', 'passwd'), '']) {
      const r = await agent.callTool({
        name: 'open_test_card',
        arguments: { title: 'Path card', column: 'todo', notes_path },
      });
      assert.equal(r.isError, true, notes_path);
      assert.match(
        text(r),
        notes_path
          ? /^ErrPathOutsideRoots: notes_path resolves outside the allowed roots/
          : /^ErrInvalidInput: notes_path must be a non-empty string/,
      );
    }
    assert.equal(f.eventCount(), events);
    assert.deepEqual(
      seen.filter((s) => s.includes('passwd')),
      [],
    );
    const ok = await agent.callTool({
      name: 'open_test_card',
      arguments: { title: 'Path card', column: 'todo', notes_path: join(workspace, 'notes', '..', 'notes', 'a.md') },
    });
    assert.equal(ok.isError, undefined, text(ok));
    assert.ok(seen.includes(join(workspace, 'notes', 'a.md')), 'the handler gets the resolved path');
  });

  it('turns an unexpected failure into ErrInternal with a correlation id and no internals', async () => {
    const r = await (await f.connect(f.agentToken)).callTool({ name: 'explode', arguments: {} });
    assert.equal(r.isError, true);
    assert.match(text(r), /^ErrInternal: internal error \(correlation id [0-9a-f]{12}\)$/);
    assert.doesNotMatch(JSON.stringify(r), /passwd|secret internals|at /);
    assert.deepEqual([lastAudit().outcome, lastAudit().errorCode], ['error', 'ErrInternal']);
  });

  it('audits a codomyrmex-shaped refusal ({status:"error"}) as an error with its code', async () => {
    const r = await (
      await f.connect(f.ownerToken)
    ).callTool({ name: 'get_agent_capability', arguments: { capability_id: 'agent:nobody' } });
    assert.equal(r.isError, undefined, 'codomyrmex answers not-found as an ordinary result');
    assert.equal((r.structuredContent as { error_code: string }).error_code, 'CAPABILITY_NOT_FOUND');
    assert.deepEqual([lastAudit().outcome, lastAudit().errorCode], ['error', 'CAPABILITY_NOT_FOUND']);
  });

  it('runs an allowed write and audits it with its command id', async () => {
    const events = f.eventCount();
    const r = await (
      await f.connect(f.agentToken)
    ).callTool({ name: 'open_test_card', arguments: { title: 'Real card', column: 'doing' } });
    assert.equal(r.isError, undefined, text(r));
    assert.equal(f.eventCount(), events + 1);
    const row = lastAudit();
    assert.deepEqual([row.outcome, row.tool], ['success', 'open_test_card']);
    const meta = JSON.parse(
      (f.app.engine.db.prepare('SELECT meta FROM es_events ORDER BY position DESC LIMIT 1').get() as { meta: string })
        .meta,
    );
    assert.deepEqual([meta.commandId, meta.actor], [row.commandId, 'agent:worker']);
  });
});

describe('confirmation tokens', () => {
  const ask = async (name = 'shred_card', card_id = 7) => {
    const owner = await f.connect(f.ownerToken);
    const r = await owner.callTool({ name, arguments: { card_id } });
    assert.equal(lastAudit().outcome, 'pending_confirmation');
    const body = r.structuredContent as {
      confirmation_required: boolean;
      confirm_token: string;
      tool_name: string;
      args_preview: unknown;
    };
    assert.deepEqual([body.confirmation_required, body.tool_name, body.args_preview], [true, name, { card_id }]);
    return { owner, token: body.confirm_token };
  };
  const refused = async (call: Promise<unknown>, message: RegExp) => {
    const r = (await call) as { isError?: boolean };
    assert.equal(r.isError, true);
    assert.match(text(r), message);
    assert.deepEqual([lastAudit().outcome], ['blocked']);
  };

  it('runs the tool once on the second call with the token', async () => {
    const { owner, token } = await ask();
    const r = await owner.callTool({ name: 'shred_card', arguments: { card_id: 7, confirmation_token: token } });
    assert.deepEqual(r.structuredContent, { done: 7 });
    await refused(
      owner.callTool({ name: 'shred_card', arguments: { card_id: 7, confirmation_token: token } }),
      /^ErrConfirmationInvalid: invalid or expired/,
    );
  });

  it('refuses other arguments, another tool, another caller and an expired token — consuming it each time', async () => {
    const runs = seen.length;
    let { owner, token } = await ask();
    await refused(
      owner.callTool({ name: 'shred_card', arguments: { card_id: 8, confirmation_token: token } }),
      /does not match arguments/,
    );
    await refused(
      owner.callTool({ name: 'shred_card', arguments: { card_id: 7, confirmation_token: token } }),
      /invalid or expired/,
    );
    ({ owner, token } = await ask());
    await refused(
      owner.callTool({ name: 'burn_card', arguments: { card_id: 7, confirmation_token: token } }),
      /does not match tool/,
    );
    ({ token } = await ask());
    const bob = createOwner(f.app, 'bob', { actor: 'system' });
    await refused(
      (await f.connect(bob.token)).callTool({
        name: 'shred_card',
        arguments: { card_id: 7, confirmation_token: token },
      }),
      /issued to another caller/,
    );
    ({ owner, token } = await ask());
    now += CONFIRMATION_TTL_MS + 1;
    await refused(
      owner.callTool({ name: 'shred_card', arguments: { card_id: 7, confirmation_token: token } }),
      /invalid or expired/,
    );
    assert.equal(seen.length, runs, 'the tool never ran');
  });
});
