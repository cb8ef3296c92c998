import { DomainError, invalidInput } from '../errors.js';
import {
  MAX_SECRET_BYTES,
  MAX_SECRET_NAME,
  SECRET_NAME,
  type ScopeType,
  type SecretEvent,
  type SecretScope,
  type SecretSet,
  type SecretUsed,
} from '../events/secrets.js';
import type { Decider } from '../engine/decider.js';
import { type By, isOwner } from '../events/principals.js';

/**
 * The secret decider (`secret-<id>` streams): set once, revoked at most once (by the owner, or because a
 * newer value replaced it), and used by processes Colony starts. Only the owner sets, replaces and
 * revokes secrets. The sealed value is made before deciding (the nonce is random) and arrives in the
 * command with its size; which secret a new one replaces is a fact from other streams, looked up by the
 * caller inside the same transaction.
 */
export type SetSecret = {
  type: 'SetSecret';
  secret: SecretSet['data'];
  /** Fact: the size of the value before it was sealed, in UTF-8 bytes. */
  valueBytes: number;
};
export type RevokeSecret = { type: 'RevokeSecret'; reason: 'revoked' | 'replaced'; replacedBy: number | null; by: By };
export type RecordSecretUse = { type: 'RecordSecretUse' } & Omit<SecretUsed['data'], 'secretId'>;
export type SecretCommand = SetSecret | RevokeSecret | RecordSecretUse;

export type Secret =
  | { status: 'absent' }
  | { status: 'active' | 'revoked'; secretId: number; ownerId: number; name: string; scope: SecretScope };

/**
 * A secret (or requested resource) name as it is stored and injected: upper-cased, then it must match
 * `^[A-Z][A-Z0-9_]*$` — anything else is rejected, never stripped. Only ASCII letters are upper-cased
 * (`ß` would otherwise become `SS`). Unlike SynapBus's store, a leading digit is rejected, as the
 * request_resource contract says (and such a name is no valid environment variable).
 */
export function secretName(raw: string): string {
  const name = raw.replace(/[a-z]/g, (c) => c.toUpperCase());
  if (name.length === 0 || name.length > MAX_SECRET_NAME || !SECRET_NAME.test(name)) {
    // The message does not repeat the name: a value typed where the name goes must not be echoed back.
    throw new DomainError(
      'ErrInvalidName',
      `invalid secret name: upper-cased it must match ${SECRET_NAME.source} (1–${MAX_SECRET_NAME} characters; A-Z first, then A-Z, 0-9, _)`,
    );
  }
  return name;
}

function evolve(state: Secret, event: SecretEvent): Secret {
  switch (event.type) {
    case 'SecretSet': {
      const d = event.data;
      return { status: 'active', secretId: d.secretId, ownerId: d.ownerId, name: d.name, scope: d.scope };
    }
    case 'SecretRevoked':
      return state.status === 'absent' ? state : { ...state, status: 'revoked' };
    case 'SecretUsed':
      return state;
    default: {
      const never: never = event;
      return never;
    }
  }
}

function decide(command: SecretCommand, state: Secret): SecretEvent[] {
  if (command.type === 'SetSecret') {
    const s = command.secret;
    if (!isOwner(s.by, s.ownerId)) throw new DomainError('ErrForbidden', 'only the owner sets secrets');
    if (command.valueBytes > MAX_SECRET_BYTES)
      throw invalidInput(`a secret value may hold at most ${MAX_SECRET_BYTES} bytes`, { field: 'value' });
    if (state.status !== 'absent') throw new DomainError('ErrSecretExists', `secret ${s.secretId} already exists`);
    if (secretName(s.name) !== s.name)
      throw new DomainError('ErrInvalidName', `secret name ${s.name} is not normalized`, { name: s.name });
    if (s.sealed.length === 0) throw invalidInput('a secret is stored sealed, never empty');
    return [{ type: 'SecretSet', data: s }];
  }
  if (state.status === 'absent') throw new DomainError('ErrNotFound', 'secret not found');
  switch (command.type) {
    case 'RevokeSecret':
      // A secret is replaced when its owner sets a new value: refusing that is refusing the set.
      if (!isOwner(command.by, state.ownerId))
        throw new DomainError(
          'ErrForbidden',
          `only the owner ${command.reason === 'replaced' ? 'sets' : 'revokes'} secrets`,
        );
      if (state.status === 'revoked')
        throw new DomainError(
          'ErrAlreadyRevoked',
          `secret ${state.secretId} (${state.name}, ${state.scope.label}) is already revoked`,
          { secret_id: state.secretId },
        );
      return [
        {
          type: 'SecretRevoked',
          data: { secretId: state.secretId, reason: command.reason, replacedBy: command.replacedBy, by: command.by },
        },
      ];
    case 'RecordSecretUse':
      if (state.status !== 'active') return [];
      return [
        {
          type: 'SecretUsed',
          data: {
            secretId: state.secretId,
            purpose: command.purpose,
            taskId: command.taskId,
            agentId: command.agentId,
          },
        },
      ];
    default: {
      const never: never = command;
      return never;
    }
  }
}

export const secretDecider: Decider<Secret, SecretCommand, SecretEvent> = {
  initialState: () => ({ status: 'absent' }),
  evolve,
  decide,
};

const SCOPE_RANK: Record<ScopeType, number> = { user: 0, agent: 1, task: 2 };

/**
 * Which of the owner's active secrets a process Colony starts gets, one per name: the closest scope
 * wins (task over agent over user), and of the user-scope secrets only the granted ones — all of them
 * for an agent's runs, only those a verifier recipe names for its command.
 */
export function secretsForProcess<S extends { name: string; scopeType: ScopeType }>(
  candidates: readonly S[],
  granted: 'all' | readonly string[],
): S[] {
  const winners = new Map<string, S>();
  for (const s of [...candidates].sort((a, b) => SCOPE_RANK[a.scopeType] - SCOPE_RANK[b.scopeType])) {
    if (s.scopeType === 'user' && granted !== 'all' && !granted.includes(s.name)) continue;
    winners.set(s.name, s);
  }
  return [...winners.values()];
}
