import type { App } from '../app.js';
import { secretDecider, secretName } from '../commands/secrets.js';
import { DomainError, notFound } from '../errors.js';
import { SCOPE_TYPES, secretStream, type ScopeType, type SecretScope } from '../events/secrets.js';
import { seal } from '../masterkey.js';
import { getTask, ownerOfTask } from '../projections/task-queries.js';
import { getAgent, getAgentByName, getUser, getUserByName } from '../projections/principal-queries.js';
import { activeSecret, getSecret, type SecretInfo } from '../projections/secrets.js';
import { who } from './goals.js';
import { fulfilRequests } from './resources/answered.js';
import { warnTasksOfRevokedSecret } from './secrets/warnings.js';
import { type Speaker } from '../events/principals.js';
import { type CommandOptions } from '../engine/handle.js';

/**
 * Secret commands shared by the CLI, the owner's MCP tool and REST: each is one transaction that finds
 * the scope and the secrets it touches and routes to the secret decider, which lets only the owner set
 * and revoke. The value is sealed before it reaches the decider and never leaves this module in
 * plaintext (the env-map builder, in actions/secrets/env.ts, is the only opener).
 */
export interface SetResult {
  secretId: number;
  name: string;
  scope: SecretScope;
  replaced: number | null;
  fulfilled: number[];
}

/** `user:NAME`, `agent:NAME` or `task:ID` (a user or agent may also be named by its integer id). */
export function parseScope(text: string): { type: ScopeType; ref: string } {
  const colon = text.indexOf(':');
  const type = text.slice(0, colon) as ScopeType;
  const ref = text.slice(colon + 1).trim();
  if (colon < 0 || !SCOPE_TYPES.includes(type) || ref === '' || (type === 'task' && !/^\d+$/.test(ref))) {
    throw new DomainError(
      'ErrInvalidScope',
      `invalid scope ${JSON.stringify(text.slice(0, 80))}: use user:NAME, agent:NAME or task:ID`,
      { scope: text.slice(0, 80) },
    );
  }
  return { type, ref };
}

/** A scope resolved to ids within the owner's tenant; anything outside it is not found. */
export function resolveScope(app: App, ownerId: number, scope: string | { type: ScopeType; ref: string }): SecretScope {
  const { type, ref } = typeof scope === 'string' ? parseScope(scope) : scope;
  const db = app.engine.db;
  const byId = /^\d+$/.test(ref) ? Number(ref) : null;
  switch (type) {
    case 'user': {
      const user = byId !== null ? getUser(db, byId) : getUserByName(db, ref);
      if (!user || user.userId !== ownerId) throw notFound(`user ${ref}`, { scope: `user:${ref}` });
      return { type, id: user.userId, label: `user:${user.name}` };
    }
    case 'agent': {
      const agent = byId !== null ? getAgent(db, byId) : getAgentByName(db, ownerId, ref);
      if (!agent || agent.ownerId !== ownerId) throw notFound(`agent ${ref}`, { scope: `agent:${ref}` });
      return { type, id: agent.agentId, label: `agent:${agent.name}` };
    }
    case 'task': {
      const task = byId !== null ? getTask(db, byId) : null;
      if (!task || ownerOfTask(db, task) !== ownerId)
        throw new DomainError('ErrTaskNotFound', `task ${ref} not found`, { task_id: byId });
      return { type, id: task.taskId, label: `task:${task.taskId}` };
    }
    default: {
      const never: never = type;
      return never;
    }
  }
}

/**
 * `secrets set`: seals the value, replaces the active secret of that (scope, name) — history is kept —
 * and fulfils the pending requests it answers (each requester gets a DM), all in one command. `answers`:
 * a request the owner answers with this value, which it must fulfil (resources/fulfil.ts).
 */
export function setSecret(
  app: App,
  by: Speaker,
  input: { name: string; value: string; scope: string; answers?: number },
  actor: CommandOptions,
): SetResult {
  // The name as it is stored: also the key the secret it replaces is found by.
  const name = secretName(input.name);
  const result = app.engine.transact(actor, (uow) => {
    const scope = resolveScope(app, by.tenant, input.scope);
    const previous = activeSecret(app.engine.db, by.tenant, scope, name);
    const secretId = uow.ids.next('secret');
    if (previous) {
      app.engine.handle(
        secretDecider,
        secretStream(previous.secretId),
        { type: 'RevokeSecret', reason: 'replaced', replacedBy: secretId, by: who(by) },
        actor,
      );
    }
    app.engine.handle(
      secretDecider,
      secretStream(secretId),
      {
        type: 'SetSecret',
        secret: {
          secretId,
          ownerId: by.tenant,
          name,
          scope,
          sealed: seal(app.key, input.value),
          replaces: previous?.secretId ?? null,
          by: who(by),
        },
        valueBytes: Buffer.byteLength(input.value, 'utf8'),
      },
      actor,
    );
    const fulfilled = fulfilRequests(app, by, { secretId, name, scope }, actor, input.answers);
    return { secretId, name, scope, replaced: previous?.secretId ?? null, fulfilled };
  });
  if (!result.value) throw new DomainError('ErrDuplicateCommand', 'this command already ran');
  return result.value;
}

export type RevokeTarget = { secretId: number } | { name: string; scope: string };

/**
 * `secrets revoke` / revoke_secret: by id, or the active secret of a (scope, name). Every unfinished task
 * it reached gets a warning in its goal channel, in the same command, so it does not go without it silently.
 */
export function revokeSecret(app: App, by: Speaker, target: RevokeTarget, actor: CommandOptions): SecretInfo {
  const result = app.engine.transact(actor, () => {
    const db = app.engine.db;
    let secret: SecretInfo | null;
    if ('secretId' in target) {
      secret = getSecret(db, target.secretId);
      if (!secret || secret.ownerId !== by.tenant)
        throw new DomainError('ErrNotFound', `secret ${target.secretId} not found`, { secret_id: target.secretId });
    } else {
      const name = secretName(target.name);
      const scope = resolveScope(app, by.tenant, target.scope);
      secret = activeSecret(db, by.tenant, scope, name);
      if (!secret)
        throw new DomainError('ErrNotFound', `no active secret ${name} in ${scope.label}`, {
          name,
          scope: scope.label,
        });
    }
    app.engine.handle(
      secretDecider,
      secretStream(secret.secretId),
      { type: 'RevokeSecret', reason: 'revoked', replacedBy: null, by: who(by) },
      actor,
    );
    warnTasksOfRevokedSecret(app, by, secret, actor);
    return secret.secretId;
  });
  const secretId = result.value ?? (result.events[0]?.data as { secretId: number }).secretId;
  return getSecret(app.engine.db, secretId)!;
}
