import type { App } from '../../app.js';
import { resourceDecider } from '../../commands/resources.js';
import type { CommandOptions } from '../../engine/handle.js';
import type { Speaker } from '../../events/principals.js';
import { resourceRequestStream } from '../../events/resources.js';
import type { SecretScope } from '../../events/secrets.js';
import { pendingRequests, type ResourceRequestRow } from '../../projections/resources.js';
import { who } from '../goals.js';
import { sendSystemDirect } from '../notifications.js';
import { requestOf } from '../resources.js';

/**
 * Inside `secrets set`: routes the new secret to each pending request of its name — the decider fulfils
 * those it answers — and DMs each requester it fulfilled. `answers`: the request the owner is answering
 * (the console's fulfil), which must be fulfilled by this secret.
 */
export function fulfilRequests(
  app: App,
  by: Speaker,
  secret: { secretId: number; name: string; scope: SecretScope },
  actor: CommandOptions,
  answers?: number,
): number[] {
  const pending = pendingRequests(app.engine.db, by.tenant, secret.name);
  const asked =
    answers === undefined || pending.some((r) => r.requestId === answers) ? [] : [requestOf(app, by, answers)];
  const fulfilled: number[] = [];
  for (const r of [...pending, ...asked]) {
    const { events } = app.engine.handle(
      resourceDecider,
      resourceRequestStream(r.requestId),
      { type: 'FulfilRequest', secret, by: who(by), explicit: r.requestId === answers },
      actor,
    );
    if (events.length === 0) continue;
    tellRequester(app, by, r, secret, actor);
    fulfilled.push(r.requestId);
  }
  return fulfilled;
}

function tellRequester(
  app: App,
  by: Speaker,
  r: ResourceRequestRow,
  secret: { name: string; scope: SecretScope },
  actor: CommandOptions,
): void {
  const body =
    `Your resource request #${r.requestId} is fulfilled: ${secret.name} (${secret.scope.label}) is now set. Colony passes it as the ` +
    `environment variable ${secret.name} to the processes it starts for task #${r.taskId}; its value is never shown over MCP.`;
  sendSystemDirect(
    app,
    by.tenant,
    `agent-${r.requesterAgentId}`,
    body,
    {
      event: 'ResourceRequestFulfilled',
      request_id: r.requestId,
      resource_name: secret.name,
      scope: secret.scope.label,
      task_id: r.taskId,
    },
    actor,
  );
}
