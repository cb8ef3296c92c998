import type { App } from '../app.js';
import { resourceDecider } from '../commands/resources.js';
import { secretName } from '../commands/secrets.js';
import { DomainError } from '../errors.js';
import { RESOURCE_REQUEST_KIND, resourceRequestStream, type ResourceType } from '../events/resources.js';
import type { ScopeType } from '../events/secrets.js';
import { getResourceRequest, pendingRequestOf, type ResourceRequestRow } from '../projections/resources.js';
import { activeSecretsIn, type ScopeKey } from '../projections/secrets.js';
import { sendToChannel, type Sent } from './channels.js';
import { agentIdOf, who } from './goals.js';
import { taskFor } from './tasks.js';
import { type Speaker } from '../events/principals.js';
import { type CommandOptions } from '../engine/handle.js';
import { sendSystemDirect } from './notifications.js';

/**
 * Resources: an agent asks for a missing secret on a task (request_resource), sees which names it can
 * use (list_resources — names, scopes, availability, never values), and the owner rejects one here;
 * the owner's `secrets set` fulfils the requests it answers (resources/answered.ts), and the console
 * answers one request with a value (resources/fulfil.ts). Who may ask, reject or be answered is the
 * resource-request decider's to say.
 */
export interface NewRequest {
  name: string;
  resourceType: ResourceType;
  reason: string;
  taskId?: number;
}
export interface Requested {
  requestId: number;
  messageId: number;
  existing: boolean;
}

/**
 * Records the request and posts it to `#requests` as a structured message, in one command. Asking again
 * for the same name on the same task while the first request is pending returns that request.
 */
export function requestResource(app: App, by: Speaker, input: NewRequest, actor: CommandOptions): Requested {
  if (input.taskId === undefined) {
    throw new DomainError(
      'ErrMissingTaskContext',
      'request_resource needs task_id: the task the resource is for (resources are requested for a task)',
    );
  }
  const taskId = input.taskId;
  // The name as it is stored: also the key the requester's pending request is found by.
  const name = secretName(input.name);
  const agentId = agentIdOf(by);
  const result = app.engine.transact(actor, (uow) => {
    const { task } = taskFor(app, by, taskId);
    const pending = agentId === null ? null : pendingRequestOf(app.engine.db, agentId, taskId, name);
    if (pending) return { requestId: pending.requestId, messageId: pending.messageId, existing: true };
    const requestId = uow.ids.next(RESOURCE_REQUEST_KIND);
    const reason = input.reason.trim();
    const sent = postRequest(
      app,
      by,
      { requestId, name, reason, taskId, title: task.title, type: input.resourceType },
      actor,
    );
    app.engine.handle(
      resourceDecider,
      resourceRequestStream(requestId),
      {
        type: 'RequestResource',
        request: {
          requestId,
          ownerId: by.tenant,
          requesterAgentId: agentId,
          requesterName: by.name,
          taskId,
          goalId: task.goalId,
          name,
          resourceType: input.resourceType,
          reason,
          messageId: sent.messageId,
          channelId: sent.channelId,
        },
      },
      actor,
    );
    return { requestId, messageId: sent.messageId, existing: false };
  });
  if (!result.value) {
    const e = result.events.find((x) => x.type === 'ResourceRequested')!.data as {
      requestId: number;
      messageId: number;
    };
    return { requestId: e.requestId, messageId: e.messageId, existing: true };
  }
  return result.value;
}

/** The request as a structured message in `#requests`, with the command that fulfils it. */
function postRequest(
  app: App,
  by: Speaker,
  r: { requestId: number; name: string; reason: string; taskId: number; title: string; type: ResourceType },
  actor: CommandOptions,
): Sent {
  const body =
    `Resource request #${r.requestId} from ${by.name}: ${r.name} (${r.type}) for task #${r.taskId} "${r.title}" — ${r.reason}\n` +
    `Fulfil it with: colony secrets set ${r.name} - --scope agent:${by.name}   (or --scope task:${r.taskId}, or user:<owner>)`;
  const metadata = {
    kind: 'resource_request',
    request_id: r.requestId,
    resource_name: r.name,
    resource_type: r.type,
    reason: r.reason,
    task_id: r.taskId,
  };
  return sendToChannel(
    app,
    by,
    { name: 'requests' },
    { body, subject: `Resource request: ${r.name}`, priority: 6, metadata, replyTo: null },
    actor,
  );
}

/** The owner declines a pending request with a reason: ResourceRequestRejected and a DM to the requester, in one command. */
export function rejectRequest(
  app: App,
  by: Speaker,
  requestId: number,
  reason: string,
  actor: CommandOptions,
): ResourceRequestRow {
  app.engine.transact(actor, () => {
    const r = requestOf(app, by, requestId);
    const { events } = app.engine.handle(
      resourceDecider,
      resourceRequestStream(requestId),
      { type: 'RejectRequest', reason, by: who(by) },
      actor,
    );
    const why = (events[0]?.data as { reason: string } | undefined)?.reason ?? reason.trim();
    sendSystemDirect(
      app,
      by.tenant,
      `agent-${r.requesterAgentId}`,
      `Your resource request #${requestId} (${r.name} for task #${r.taskId}) was rejected by ${by.name}: ${why}`,
      {
        event: 'ResourceRequestRejected',
        request_id: requestId,
        resource_name: r.name,
        task_id: r.taskId,
        reason: why,
      },
      actor,
    );
  });
  return getResourceRequest(app.engine.db, requestId)!;
}

/** A request of the caller's tenant; any other is not found. */
export function requestOf(app: App, by: Speaker, requestId: number): ResourceRequestRow {
  const r = getResourceRequest(app.engine.db, requestId);
  if (!r || r.ownerId !== by.tenant)
    throw new DomainError('ErrNotFound', `resource request ${requestId} not found`, { request_id: requestId });
  return r;
}

export interface ResourceView {
  name: string;
  scope: ScopeType;
  available: boolean;
}

/** list_resources: the names the caller can use — its owner's user scope, its own agent scope, and a task's scope when asked. */
export function listResources(app: App, by: Speaker, taskId?: number): ResourceView[] {
  const scopes: ScopeKey[] = [{ type: 'user', id: by.tenant }];
  const agentId = agentIdOf(by);
  if (agentId !== null) scopes.push({ type: 'agent', id: agentId });
  if (taskId !== undefined) scopes.push({ type: 'task', id: taskFor(app, by, taskId).task.taskId });
  const rank: Record<ScopeType, number> = { task: 0, agent: 1, user: 2 };
  return activeSecretsIn(app.engine.db, by.tenant, scopes)
    .map((s) => ({ name: s.name, scope: s.scopeType, available: s.available }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : rank[a.scope] - rank[b.scope]));
}
