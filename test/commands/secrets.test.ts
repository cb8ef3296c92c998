import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resourceDecider, type RequestResource } from '../../src/commands/resources.js';
import { secretDecider, secretName, type SecretCommand } from '../../src/commands/secrets.js';
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
    spec(secretDecider).given([]).when({ type: 'SetSecret', secret: data }).then([set()]);
    spec(secretDecider).given([set()]).when({ type: 'SetSecret', secret: data }).thenThrows('ErrSecretExists');
  });
  it('refuses a name that is not normalized, or an empty sealed value', () => {
    spec(secretDecider)
      .given([])
      .when({ type: 'SetSecret', secret: { ...set().data, name: 'api_key' } })
      .thenThrows('ErrInvalidName');
    spec(secretDecider)
      .given([])
      .when({ type: 'SetSecret', secret: { ...set().data, sealed: '' } })
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

describe('resource-request decider', () => {
  const requested = (over: Partial<ResourceRequested['data']> = {}): ResourceRequested => ({
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
  const request = (over: Partial<ResourceRequested['data']> = {}): RequestResource => ({
    type: 'RequestResource',
    request: requested(over).data,
  });
  const fulfilled: ResourceRequestFulfilled = {
    type: 'ResourceRequestFulfilled',
    data: { requestId: 2, secretId: 5, scope: 'agent:worker', by: owner },
  };
  const fulfil = { type: 'FulfilRequest' as const, secretId: 5, scope: 'agent:worker', by: owner };

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
