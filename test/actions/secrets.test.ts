import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import nacl from 'tweetnacl';
import { createGoal } from '../../src/actions/goals.js';
import { createOwner, registerAgent } from '../../src/actions/principals.js';
import { decideProposal, proposeTaskTree } from '../../src/actions/proposals.js';
import { buildSecretEnv } from '../../src/actions/secrets/env.js';
import { revokeSecret, setSecret } from '../../src/actions/secrets.js';
import { openApp, type App } from '../../src/app.js';
import { DomainError } from '../../src/errors.js';
import { MasterKeyError } from '../../src/masterkey.js';
import { getSecret, listSecrets } from '../../src/projections/secrets.js';
import { dumpTables } from '../helpers/engine.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * The upstream secret store's tests (its `internal/secrets/store_test.go`) against Colony's
 * actions and projection on a real data dir: round trip, name rules, list hides values, revoke, scope
 * precedence, set replaces — plus tenant isolation, rebuild equivalence and a wrong master key.
 */
interface World {
  app: App;
  owner: { key: string; name: string; tenant: number };
  agentId: number;
  taskId: number;
  other: { key: string; name: string; tenant: number };
}
const actor = { actor: 'user:owner' };

function world(t: TestContext): World {
  const scratch = tempDir('colony-secrets-');
  const app = openApp({ dataDir: scratch.dir, durability: 'normal' });
  t.after(() => {
    app.engine.close();
    scratch.cleanup();
  });
  const { userId } = createOwner(app, 'owner', { actor: 'system' });
  const owner = { key: `user-${userId}`, name: 'owner', tenant: userId };
  const spec = (name: string, ownerId: number) => ({
    name,
    ownerId,
    model: 'm',
    systemPrompt: `You are ${name}.`,
    toolScope: ['whoami'],
    tier: 'supervised' as const,
    command: null,
    parentId: null,
    spawnDepth: 0,
  });
  const agentId = registerAgent(app, spec('worker', userId), actor).agentId;
  const goalId = createGoal(
    app,
    owner,
    {
      title: 'Secrets goal',
      description: 'A goal whose task needs secrets.',
      budgets: { tokens: null, cents: null },
      maxSpawnDepth: 3,
      coordinatorConfig: 'default',
      approvalMode: 'human',
    },
    actor,
  ).goalId;
  const p = proposeTaskTree(
    app,
    owner,
    goalId,
    'Because.',
    { title: 'Send the report', description: 'Send the weekly report by mail.' } as never,
    actor,
  );
  const taskId = decideProposal(app, owner, p.proposalId, 'approve', '', actor).taskIds[0]!;
  const otherId = createOwner(app, 'other', { actor: 'system' }).userId;
  registerAgent(app, spec('stranger', otherId), { actor: 'user:other' });
  return { app, owner, agentId, taskId, other: { key: `user-${otherId}`, name: 'other', tenant: otherId } };
}

const set = (w: World, name: string, value: string, scope = 'user:owner') =>
  setSecret(w.app, w.owner, { name, value, scope }, actor);
const env = (w: World, f: { agentId?: number; taskId?: number } = {}) =>
  buildSecretEnv(w.app, { ownerId: w.owner.tenant, ...f });

function throwsCode(w: World, fn: () => unknown, code: string): DomainError {
  const head = w.app.engine.head().position;
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof DomainError && caught.code === code, `expected ${code}, got ${String(caught)}`);
  assert.equal(w.app.engine.head().position, head, 'nothing appended');
  return caught;
}

describe('secret store (upstream store_test.go)', () => {
  it('TestEncryptDecryptRoundTrip: sk-abc123, "", unicode and 8 KiB values come back; the name is stored upper-cased', (t) => {
    const w = world(t);
    const values = ['sk-abc123', '', 'héllo, wörld', 'x'.repeat(8192)];
    values.forEach((v, i) => set(w, `value_${i}`, v));
    assert.deepEqual(env(w), Object.fromEntries(values.map((v, i) => [`VALUE_${i}`, v])));
    assert.deepEqual(
      listSecrets(w.app.engine.db, w.owner.tenant).map((s) => s.name),
      ['VALUE_0', 'VALUE_1', 'VALUE_2', 'VALUE_3'],
    );
  });

  it('TestSanitizeNameViaSet: api_key → API_KEY, Token1 → TOKEN1, FOO_2 and OPENAI_KEY kept; the rest rejected with nothing appended', (t) => {
    const w = world(t);
    for (const [raw, stored] of [
      ['api_key', 'API_KEY'],
      ['OPENAI_KEY', 'OPENAI_KEY'],
      ['Token1', 'TOKEN1'],
      ['FOO_2', 'FOO_2'],
    ]) {
      assert.equal(set(w, raw!, 'v').name, stored);
    }
    for (const bad of ['', 'BAD-NAME', 'with space', 'dot.name', 'unicode_é', '9LIVES'])
      throwsCode(w, () => set(w, bad, 'v'), 'ErrInvalidName');
  });

  it('TestListHidesValues: one item SECRET1, available, and no field that holds a value', (t) => {
    const w = world(t);
    set(w, 'SECRET1', 'hunter2-plaintext');
    const list = listSecrets(w.app.engine.db, w.owner.tenant);
    assert.equal(list.length, 1);
    assert.deepEqual([list[0]!.name, list[0]!.available], ['SECRET1', true]);
    for (const key of Object.keys(list[0]!))
      assert.ok(!['value', 'plaintext', 'secret', 'sealed'].includes(key.toLowerCase()), key);
    assert.ok(!JSON.stringify(list).includes('hunter2'));
  });

  it('TestRevokeHidesFromList: gone from the list and the env; a second revoke is ErrAlreadyRevoked, an unknown id ErrNotFound', (t) => {
    const w = world(t);
    const { secretId } = set(w, 'SECRET1', 'v1');
    const r = revokeSecret(w.app, w.owner, { secretId }, actor);
    assert.deepEqual([r.available, r.revokeReason], [false, 'revoked']);
    assert.deepEqual(listSecrets(w.app.engine.db, w.owner.tenant), []);
    assert.deepEqual(env(w), {});
    throwsCode(w, () => revokeSecret(w.app, w.owner, { secretId }, actor), 'ErrAlreadyRevoked');
    throwsCode(w, () => revokeSecret(w.app, w.owner, { secretId: 999 }, actor), 'ErrNotFound');
    throwsCode(w, () => revokeSecret(w.app, w.owner, { name: 'SECRET1', scope: 'user:owner' }, actor), 'ErrNotFound');
  });

  it('TestScopePrecedence: task > agent > user, and last_used_at is set on what was handed out', (t) => {
    const w = world(t);
    const user = set(w, 'TOKEN', 'user-value');
    const agent = set(w, 'TOKEN', 'agent-value', 'agent:worker');
    const task = set(w, 'TOKEN', 'task-value', `task:${w.taskId}`);
    assert.deepEqual(env(w, { agentId: w.agentId, taskId: w.taskId }), { TOKEN: 'task-value' });
    assert.ok(getSecret(w.app.engine.db, task.secretId)!.lastUsedAt);
    assert.equal(getSecret(w.app.engine.db, agent.secretId)!.lastUsedAt, null, 'a shadowed secret was not used');
    assert.deepEqual(env(w, { agentId: w.agentId }), { TOKEN: 'agent-value' });
    assert.deepEqual(env(w), { TOKEN: 'user-value' });
    assert.ok(getSecret(w.app.engine.db, user.secretId)!.lastUsedAt);
    assert.deepEqual(env(w, { agentId: 0, taskId: -1 }), { TOKEN: 'user-value' }, 'ids ≤ 0 are skipped');
  });

  it('TestSetReplacesPrevious: v1 then v2 → v2; 2 rows, 1 active; the old one says replaced', (t) => {
    const w = world(t);
    const first = set(w, 'KEY', 'v1');
    const second = set(w, 'key', 'v2');
    assert.equal(second.replaced, first.secretId);
    assert.deepEqual(env(w), { KEY: 'v2' });
    const all = listSecrets(w.app.engine.db, w.owner.tenant, { all: true });
    assert.equal(all.length, 2);
    assert.deepEqual(
      all.filter((s) => s.available).map((s) => s.secretId),
      [second.secretId],
    );
    assert.equal(all.find((s) => s.secretId === first.secretId)!.revokeReason, 'replaced');
  });
});

describe('secret scopes and safety', () => {
  it("resolves scopes within the owner's tenant only", (t) => {
    const w = world(t);
    assert.equal(set(w, 'A', 'v', 'agent:worker').scope.label, 'agent:worker');
    assert.equal(set(w, 'A', 'v', `agent:${w.agentId}`).scope.label, 'agent:worker', 'an agent by id');
    throwsCode(w, () => set(w, 'A', 'v', 'agent:stranger'), 'ErrNotFound');
    throwsCode(w, () => set(w, 'A', 'v', 'user:other'), 'ErrNotFound');
    throwsCode(w, () => set(w, 'A', 'v', 'task:999'), 'ErrTaskNotFound');
    throwsCode(
      w,
      () => setSecret(w.app, w.other, { name: 'A', value: 'v', scope: `task:${w.taskId}` }, actor),
      'ErrTaskNotFound',
    );
    for (const bad of ['owner', 'group:x', 'task:abc', 'agent:', ':x'])
      throwsCode(w, () => set(w, 'A', 'v', bad), 'ErrInvalidScope');
    assert.deepEqual(
      buildSecretEnv(w.app, { ownerId: w.other.tenant, agentId: w.agentId, taskId: w.taskId }),
      {},
      'another owner gets none of them',
    );
  });

  it('only the owner sets or revokes; a value over 64 KiB is refused without echoing it', (t) => {
    const w = world(t);
    const agent = { key: `agent-${w.agentId}`, name: 'worker', tenant: w.owner.tenant };
    throwsCode(w, () => setSecret(w.app, agent, { name: 'A', value: 'v', scope: 'user:owner' }, actor), 'ErrForbidden');
    const { secretId } = set(w, 'A', 'v');
    throwsCode(w, () => revokeSecret(w.app, agent, { secretId }, actor), 'ErrForbidden');
    throwsCode(w, () => revokeSecret(w.app, w.other, { secretId }, actor), 'ErrNotFound');
    const e = throwsCode(w, () => set(w, 'BIG', 'y'.repeat(64 * 1024 + 1)), 'ErrInvalidInput');
    assert.ok(!e.message.includes('yyyy'));
  });

  it('a wrong master key opens nothing and records no use', (t) => {
    const w = world(t);
    set(w, 'A', 'v');
    const wrong = { ...w.app, key: nacl.randomBytes(32) };
    const head = w.app.engine.head().position;
    assert.throws(() => buildSecretEnv(wrong, { ownerId: w.owner.tenant }), MasterKeyError);
    assert.equal(w.app.engine.head().position, head);
  });

  it('rebuilding the secrets and resources projections gives the same rows', (t) => {
    const w = world(t);
    const { secretId } = set(w, 'A', 'v1');
    set(w, 'A', 'v2');
    set(w, 'B', 'v', 'agent:worker');
    revokeSecret(w.app, w.owner, { secretId: secretId + 2 }, actor);
    env(w, { agentId: w.agentId });
    const before = dumpTables(w.app.engine.db, ['secrets', 'resource_requests']);
    w.app.engine.rebuild(['secrets', 'resources']);
    assert.deepEqual(dumpTables(w.app.engine.db, ['secrets', 'resource_requests']), before);
  });
});
