import type { Event } from '../engine/event.js';
import { type By } from './principals.js';

/**
 * Secrets (SynapBus's `secrets`). Each stored value is its own `secret-<id>`
 * stream: `set` on a (scope, name) that already has an active value revokes that stream (reason
 * `replaced`) and starts a new one, in the same command — so history is kept and the id a user sees
 * (`secrets revoke --id 7`) is the stream's id, like `task-42`. Why not one stream per (scope, name):
 * stream ids stay `<kind>-<integer>`, which an import relies on to raise the id sequence; the "one
 * active value per (scope, name)" rule is a fact the command looks up inside its own BEGIN IMMEDIATE
 * transaction (writers are serialized), so it cannot race; and revoke-by-id needs no lookup at all.
 *
 * Events never carry a plaintext: `sealed` is base64(nonce ‖ secretbox ciphertext) under the master key.
 */
export type ScopeType = 'user' | 'agent' | 'task';
export const SCOPE_TYPES: readonly ScopeType[] = ['user', 'agent', 'task'];
/** A resolved scope: its type, the integer id within the owner's tenant, and how users name it (`agent:worker`). */
export interface SecretScope {
  type: ScopeType;
  id: number;
  label: string;
}

export type SecretSet = Event<
  'SecretSet',
  {
    secretId: number;
    ownerId: number;
    name: string;
    scope: SecretScope;
    sealed: string;
    /** The secret this one replaces (revoked in the same command), if any. */
    replaces: number | null;
    by: By;
  }
>;

export type SecretRevoked = Event<
  'SecretRevoked',
  {
    secretId: number;
    reason: 'revoked' | 'replaced';
    replacedBy: number | null;
    by: By;
  }
>;

/**
 * Colony handed the secret to a process it started (a command verifier; agent runs next). This is what
 * `last_used_at` shows; listing or checking availability never records a use.
 */
export type SecretUsed = Event<
  'SecretUsed',
  {
    secretId: number;
    purpose: 'command_verifier' | 'agent_run';
    taskId: number | null;
    agentId: number | null;
  }
>;

export type SecretEvent = SecretSet | SecretRevoked | SecretUsed;

export const secretStream = (secretId: number): string => `secret-${secretId}`;

export const SECRET_NAME = /^[A-Z][A-Z0-9_]*$/;
export const MAX_SECRET_NAME = 128;
/** The largest value `set` takes, in UTF-8 bytes. */
export const MAX_SECRET_BYTES = 64 * 1024;
