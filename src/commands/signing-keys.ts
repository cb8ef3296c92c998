import { DomainError, invalidInput } from '../errors.js';
import type { SigningKeyEvent } from '../events/signing-keys.js';
import type { Decider } from '../engine/decider.js';

/**
 * Which key signs the log's checkpoints. The first key is adopted once; after that the only way to a new
 * key is a rotation from the current one, carrying its endorsement (checked by the caller, who has the
 * keys: the decider stays pure). A key once used is never current again.
 */
export interface SigningKeyInfo {
  keyId: string;
  publicKey: string;
  since: string;
  retiredAt: string | null;
}
export interface SigningKeysState {
  keys: SigningKeyInfo[];
  current: string | null;
}

export type AdoptSigningKey = { type: 'AdoptSigningKey'; keyId: string; publicKey: string; by: string };
export type RotateSigningKey = {
  type: 'RotateSigningKey';
  keyId: string;
  publicKey: string;
  previousKeyId: string;
  endorsement: string;
  reason: string;
  by: string;
};
export type SigningKeyCommand = AdoptSigningKey | RotateSigningKey;

function evolve(state: SigningKeysState, event: SigningKeyEvent, at = ''): SigningKeysState {
  switch (event.type) {
    case 'SigningKeyAdopted':
    case 'SigningKeyRotated': {
      const keys = state.keys.map((k) => (k.keyId === state.current ? { ...k, retiredAt: at } : k));
      return {
        keys: [...keys, { keyId: event.data.keyId, publicKey: event.data.publicKey, since: at, retiredAt: null }],
        current: event.data.keyId,
      };
    }
    default: {
      const never: never = event;
      return never;
    }
  }
}

function decide(command: SigningKeyCommand, state: SigningKeysState): SigningKeyEvent[] {
  switch (command.type) {
    case 'AdoptSigningKey':
      if (state.current === command.keyId) return []; // already the log's key: nothing to record
      if (state.current !== null)
        throw new DomainError(
          'ErrSigningKeyMismatch',
          `the log already signs with key ${state.current}; a new key comes only by rotation`,
        );
      return [
        { type: 'SigningKeyAdopted', data: { keyId: command.keyId, publicKey: command.publicKey, by: command.by } },
      ];
    case 'RotateSigningKey': {
      if (state.current === null)
        throw new DomainError('ErrSigningKeyMismatch', 'the log has no signing key yet: nothing to rotate from');
      if (command.previousKeyId !== state.current) {
        throw new DomainError(
          'ErrSigningKeyMismatch',
          `the rotation starts from key ${command.previousKeyId}, but the log's current key is ${state.current}`,
        );
      }
      if (state.keys.some((k) => k.keyId === command.keyId))
        throw invalidInput(`key ${command.keyId} was already used by this log: rotate to a new key`);
      const { type: _type, ...data } = command;
      return [{ type: 'SigningKeyRotated', data }];
    }
    default: {
      const never: never = command;
      return never;
    }
  }
}

export const signingKeysDecider: Decider<SigningKeysState, SigningKeyCommand, SigningKeyEvent> = {
  initialState: () => ({ keys: [], current: null }),
  evolve: (state, event) => evolve(state, event, (event as { recordedAt?: string }).recordedAt ?? ''),
  decide,
};
