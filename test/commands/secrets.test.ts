import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resourceDecider, type RequestResource } from '../../src/commands/resources.js';
import { secretDecider, secretName, secretsForProcess, type SecretCommand } from '../../src/commands/secrets.js';
import { DomainError } from '../../src/errors.js';
import type { ResourceRequested, ResourceRequestFulfilled } from '../../src/events/resources.js';
import type { SecretRevoked, SecretSet, SecretUsed } from '../../src/events/secrets.js';
import { spec } from '../helpers/decider-spec.js';

/**
 * The secret and resource-request deciders, given/when/then without a database (DESIGN §3.11; reference
 * §6.8 and the name rules of `internal/secrets/store_test.go`): set once, revoke once (ErrNotFound,
 * ErrAlreadyRevoked), uses only of an active secret; requests pending → fulfilled once.
 */
const owner = { key: 'user-1', name: 'owner' };
const scope = { type: 'agent' as const, id: 3, label: 'agent:worker' };

const set = (secretId = 5, name = 'API_KEY'): SecretSet => ({
  type: 'SecretSet',
  data: { secretId, ownerId: 1, name, scope, sealed: 'bm9uY2V8Y2lwaGVy', replaces: null, by: owner },
});
const revoked = (reason: 'revoked' | 'replaced' = 'revoked', replacedBy: number | null = null): SecretRevoked => ({
  type: 'SecretRevoked',
  data: { secretId: 5, reason, replacedBy, by: owner },
});
const used: SecretUsed = {
  type: 'SecretUsed',
  data: { secretId: 5, purpose: 'command_verifier', taskId: 7, agentId: 3 },
};
const revoke: SecretCommand = { type: 'RevokeSecret', reason: 'revoked', replacedBy: null, by: owner };
const use: SecretCommand = { type: 'RecordSecretUse', purpose: 'command_verifier', taskId: 7, agentId: 3 };

describe('secret names (upstream TestSanitizeNameViaSet; DESIGN §3.11)', () => {
  it('upper-cases valid names', () => {
    assert.equal(secretName('api_key'), 'API_KEY');
    assert.equal(secretName('OPENAI_KEY'), 'OPENAI_KEY');
    assert.equal(secretName('Token1'), 'TOKEN1');
    assert.equal(secretName('FOO_2'), 'FOO_2');
  });
  it('rejects, never strips, anything else — and a leading digit or underscore (unlike the upstream store)', () => {
    for (const bad of [
      '',
      'BAD-NAME',
      'with space',
      'dot.name',
      'unicode_é',
      'straße',
      '2FA_KEY',
      '_KEY',
      ' KEY',
      'KEY\n',
      'A'.repeat(129),
    ]) {
      assert.throws(
        () => secretName(bad),
        (e: unknown) => e instanceof DomainError && e.code === 'ErrInvalidName',
        JSON.stringify(bad),
      );
    }
    assert.equal(secretName('A'.repeat(128)), 'A'.repeat(128));
  });
});

describe('secret decider', () => {
  it('sets a new secret once', () => {
    const { data } = set();
    spec(secretDecider).given([]).when({ type: 'SetSecret', secret: data, valueBytes: 5 }).then([set()]);
    spec(secretDecider)
      .given([set()])
      .when({ type: 'SetSecret', secret: data, valueBytes: 5 })
      .thenThrows('ErrSecretExists');
  });
  it('refuses a name that is not normalized, or an empty sealed value', () => {
    spec(secretDecider)
      .given([])
      .when({ type: 'SetSecret', secret: { ...set().data, name: 'api_key' }, valueBytes: 5 })
      .thenThrows('ErrInvalidName');
    spec(secretDecider)
      .given([])
      .when({ type: 'SetSecret', secret: { ...set().data, sealed: '' }, valueBytes: 5 })
      .thenThrows('ErrInvalidInput');
  });
  it('revokes an active secret once: ErrAlreadyRevoked after, ErrNotFound for an unknown one', () => {
    spec(secretDecider).given([set()]).when(revoke).then([revoked()]);
    spec(secretDecider)
      .given([set()])
      .when({ type: 'RevokeSecret', reason: 'replaced', replacedBy: 6, by: owner })
      .then([revoked('replaced', 6)]);
    spec(secretDecider).given([set(), revoked()]).when(revoke).thenThrows('ErrAlreadyRevoked');
    spec(secretDecider)
      .given([set(), revoked('replaced', 6)])
      .when(revoke)
      .thenThrows('ErrAlreadyRevoked');
    spec(secretDecider).given([]).when(revoke).thenThrows('ErrNotFound', 'secret not found');
  });
  it('records a use of an active secret only', () => {
    spec(secretDecider).given([set()]).when(use).then([used]);
    spec(secretDecider).given([set(), used]).when(use).then([used]);
    spec(secretDecider).given([set(), revoked()]).when(use).thenNothingHappened();
    spec(secretDecider).given([]).when(use).thenThrows('ErrNotFound');
  });
  it('never puts a plaintext field in an event: only the sealed value', () => {
    assert.deepEqual(Object.keys(set().data).sort(), [
      'by',
      'name',
      'ownerId',
      'replaces',
      'scope',
      'sealed',
      'secretId',
    ]);
  });
});

/** A request for BREVO_API_KEY by worker (agent 3) for task 7, as the resource-request specs start from. */
const requestedEvent = (over: Partial<ResourceRequested['data']> = {}): ResourceRequested => ({
  type: 'ResourceRequested',
  data: {
    requestId: 2,
    ownerId: 1,
    requesterAgentId: 3,
    requesterName: 'worker',
    taskId: 7,
    goalId: 1,
    name: 'BREVO_API_KEY',
    resourceType: 'api_key',
    reason: 'send the weekly report',
    messageId: 11,
    channelId: 4,
    ...over,
  },
});

describe('resource-request decider', () => {
  const requested = requestedEvent;
  const request = (over: Partial<ResourceRequested['data']> = {}): RequestResource => ({
    type: 'RequestResource',
    request: requested(over).data,
  });
  const fulfilled: ResourceRequestFulfilled = {
    type: 'ResourceRequestFulfilled',
    data: { requestId: 2, secretId: 5, scope: 'agent:worker', by: owner },
  };
  const fulfil = {
    type: 'FulfilRequest' as const,
    secret: { secretId: 5, name: 'BREVO_API_KEY', scope },
    by: owner,
    explicit: false,
  };

  it('records a request pending, trimming the reason', () => {
    spec(resourceDecider)
      .given([])
      .when(request({ reason: '  send the weekly report ' }))
      .then([requested()]);
    spec(resourceDecider).given([requested()]).when(request()).thenThrows('ErrRequestExists');
  });
  it('refuses a bad name, type or reason', () => {
    spec(resourceDecider)
      .given([])
      .when(request({ name: 'brevo' }))
      .thenThrows('ErrInvalidName');
    spec(resourceDecider)
      .given([])
      .when(request({ resourceType: 'password' as never }))
      .thenThrows('ErrInvalidInput');
    spec(resourceDecider)
      .given([])
      .when(request({ reason: ' abc ' }))
      .thenThrows('ErrInvalidInput');
  });
  it('is fulfilled once', () => {
    spec(resourceDecider).given([requested()]).when(fulfil).then([fulfilled]);
    spec(resourceDecider).given([requested(), fulfilled]).when(fulfil).thenThrows('ErrRequestNotPending');
    spec(resourceDecider).given([]).when(fulfil).thenThrows('ErrNotFound');
  });
});

describe('secret decider: who sets and revokes, and how much', () => {
  const agent = { key: 'agent-3', name: 'worker' };
  it('only the owner sets a secret (ErrForbidden, nothing written)', () => {
    spec(secretDecider)
      .given([])
      .when({ type: 'SetSecret', secret: { ...set().data, by: agent }, valueBytes: 5 })
      .thenThrows('ErrForbidden', 'only the owner sets secrets');
    spec(secretDecider).given([]).when({ type: 'SetSecret', secret: set().data, valueBytes: 5 }).then([set()]);
  });
  it('a value holds at most 64 KiB, and the refusal does not echo it', () => {
    const e = spec(secretDecider)
      .given([])
      .when({ type: 'SetSecret', secret: set().data, valueBytes: 64 * 1024 + 1 })
      .thenThrows('ErrInvalidInput', 'at most 65536 bytes');
    assert.deepEqual(e.details, { field: 'value' });
    spec(secretDecider)
      .given([])
      .when({ type: 'SetSecret', secret: set().data, valueBytes: 64 * 1024 })
      .then([set()]);
  });
  it('only the owner revokes a secret, or replaces it by setting a new value', () => {
    spec(secretDecider)
      .given([set()])
      .when({ ...revoke, by: agent })
      .thenThrows('ErrForbidden', 'only the owner revokes secrets');
    spec(secretDecider)
      .given([set()])
      .when({ type: 'RevokeSecret', reason: 'replaced', replacedBy: 6, by: agent })
      .thenThrows('ErrForbidden', 'only the owner sets secrets');
    // Another tenant's owner is not this secret's owner either.
    spec(secretDecider)
      .given([set()])
      .when({ ...revoke, by: { key: 'user-2', name: 'other' } })
      .thenThrows('ErrForbidden');
  });
});

describe('which secrets a process gets', () => {
  const s = (secretId: number, name: string, scopeType: 'user' | 'agent' | 'task') => ({ secretId, name, scopeType });
  it('the closest scope wins a name: task over agent over user', () => {
    const got = secretsForProcess([s(1, 'A', 'user'), s(2, 'B', 'user'), s(3, 'A', 'task'), s(4, 'B', 'agent')], 'all');
    assert.deepEqual(
      got.map((x) => x.secretId),
      [3, 4],
    );
    assert.deepEqual(
      secretsForProcess([s(3, 'A', 'task'), s(4, 'A', 'agent'), s(1, 'A', 'user')], 'all').map((x) => x.secretId),
      [3],
    );
  });
  it('of the user scope, only the granted names (a verifier recipe names its grant)', () => {
    const candidates = [s(1, 'A', 'user'), s(2, 'B', 'user'), s(3, 'C', 'task')];
    assert.deepEqual(
      secretsForProcess(candidates, ['B']).map((x) => x.secretId),
      [2, 3],
    );
    assert.deepEqual(
      secretsForProcess(candidates, []).map((x) => x.secretId),
      [3],
    );
  });
});

describe('resource-request decider: who asks, who answers, who rejects', () => {
  const requested = requestedEvent();
  const fulfilled = (label: string): ResourceRequestFulfilled => ({
    type: 'ResourceRequestFulfilled',
    data: { requestId: 2, secretId: 5, scope: label, by: owner },
  });
  const answer = (
    scope: { type: 'user' | 'agent' | 'task'; id: number; label: string },
    name = 'BREVO_API_KEY',
    explicit = false,
  ) => ({
    type: 'FulfilRequest' as const,
    secret: { secretId: 5, name, scope },
    by: owner,
    explicit,
  });
  const rejected = {
    type: 'ResourceRequestRejected' as const,
    data: { requestId: 2, reason: 'not for this task', by: owner },
  };

  it('only agents ask: the owner sets the secret instead (ErrForbidden, nothing written)', () => {
    spec(resourceDecider)
      .given([])
      .when({ type: 'RequestResource', request: { ...requested.data, requesterAgentId: null } })
      .thenThrows('ErrForbidden', 'only agents request resources');
    spec(resourceDecider).given([]).when({ type: 'RequestResource', request: requested.data }).then([requested]);
  });

  it('a secret answers a request in the user scope, the requester agent scope or the task scope', () => {
    for (const scope of [
      { type: 'user' as const, id: 1, label: 'user:owner' },
      { type: 'agent' as const, id: 3, label: 'agent:worker' },
      { type: 'task' as const, id: 7, label: 'task:7' },
    ]) {
      spec(resourceDecider)
        .given([requested])
        .when(answer(scope))
        .then([fulfilled(scope.label)]);
    }
  });

  it('a secret of another agent, another task or another name passes the request over', () => {
    for (const c of [
      answer({ type: 'agent', id: 4, label: 'agent:helper' }),
      answer({ type: 'task', id: 8, label: 'task:8' }),
      answer({ type: 'user', id: 1, label: 'user:owner' }, 'OTHER_KEY'),
    ]) {
      spec(resourceDecider).given([requested]).when(c).thenNothingHappened();
    }
  });

  it('the request the owner answers must be fulfilled by the secret, and pending', () => {
    spec(resourceDecider)
      .given([requested])
      .when(answer({ type: 'agent', id: 4, label: 'agent:helper' }, 'BREVO_API_KEY', true))
      .thenThrows('ErrRequestNotPending', 'was not fulfilled by the new secret');
    const e = spec(resourceDecider)
      .given([requested, rejected])
      .when(answer({ type: 'agent', id: 3, label: 'agent:worker' }, 'BREVO_API_KEY', true))
      .thenThrows('ErrRequestNotPending', 'is rejected, not pending');
    assert.deepEqual(e.details, { request_id: 2, status: 'rejected' });
    spec(resourceDecider)
      .given([requested])
      .when(answer({ type: 'agent', id: 3, label: 'agent:worker' }, 'BREVO_API_KEY', true))
      .then([fulfilled('agent:worker')]);
  });

  it('only the owner rejects, a pending request, with a reason', () => {
    const reject = { type: 'RejectRequest' as const, reason: ' not for this task ', by: owner };
    spec(resourceDecider)
      .given([requested])
      .when({ ...reject, by: { key: 'agent-3', name: 'worker' } })
      .thenThrows('ErrForbidden', 'only the owner rejects resource requests');
    spec(resourceDecider).given([requested]).when(reject).then([rejected]);
    spec(resourceDecider).given([requested, rejected]).when(reject).thenThrows('ErrRequestNotPending');
    spec(resourceDecider)
      .given([requested])
      .when({ ...reject, reason: '   ' })
      .thenThrows('ErrInvalidInput');
    spec(resourceDecider).given([]).when(reject).thenThrows('ErrNotFound');
  });
});
