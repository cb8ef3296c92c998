import type { App } from '../../app.js';
import { secretDecider, secretsForProcess } from '../../commands/secrets.js';
import { secretStream, type SecretUsed } from '../../events/secrets.js';
import { unseal } from '../../masterkey.js';
import { sealedSecrets, type ScopeKey } from '../../projections/secrets.js';

/**
 * The one env-map builder (SynapBus's BuildEnvMap): the owner's active secrets of `user:<owner>`,
 * `agent:<agentId>` and `task:<taskId>`, opened with the master key, the closest scope winning
 * (task > agent > user; commands/secrets.ts secretsForProcess). Names are normalized when set, so they
 * are the variable names.
 *
 * Only code that is about to start a process calls this — it is a command, not a read: it records
 * `SecretUsed` on every secret it hands out (that is `last_used_at`), in one transaction with the reads,
 * and by `system`. Listing secrets or resources never calls it. Ids ≤ 0 are skipped, as SynapBus does.
 */
export interface SecretEnvFor {
  ownerId: number;
  agentId?: number | null;
  taskId?: number | null;
  purpose?: SecretUsed['data']['purpose'];
  /** Which of the owner's user-scope secrets: all of them (agent runs), or only these names (a verifier recipe's grant). */
  userSecrets?: 'all' | readonly string[];
}

export function buildSecretEnv(app: App, f: SecretEnvFor): Record<string, string> {
  if (f.ownerId <= 0) return {};
  const scopes: ScopeKey[] = [{ type: 'user', id: f.ownerId }];
  if (f.agentId && f.agentId > 0) scopes.push({ type: 'agent', id: f.agentId });
  if (f.taskId && f.taskId > 0) scopes.push({ type: 'task', id: f.taskId });
  const result = app.engine.transact({ actor: 'system' }, () => {
    const winners = secretsForProcess(sealedSecrets(app.engine.db, f.ownerId, scopes), f.userSecrets ?? 'all');
    const env: Record<string, string> = {};
    for (const s of winners) env[s.name] = unseal(app.key, s.sealed);
    for (const s of winners) {
      app.engine.handle(
        secretDecider,
        secretStream(s.secretId),
        {
          type: 'RecordSecretUse',
          purpose: f.purpose ?? 'command_verifier',
          taskId: f.taskId ?? null,
          agentId: f.agentId ?? null,
        },
        { actor: 'system' },
      );
    }
    return env;
  });
  return result.value ?? {};
}
