import type { App } from '../app.js';
import { resourceDecider } from '../commands/resources.js';
import { secretName } from '../commands/secrets.js';
import { DomainError } from '../errors.js';
import { RESOURCE_REQUEST_KIND, resourceRequestStream, type ResourceType } from '../events/resources.js';
import type { ScopeType, SecretScope } from '../events/secrets.js';
import {
  getResourceRequest,
  pendingRequestOf,
  pendingRequests,
  type ResourceRequestRow,
} from '../projections/resources.js';
import { activeSecretsIn, type ScopeKey } from '../projections/secrets.js';
import { sendToChannel } from './channels.js';
import { agentIdOf, isOwner, who } from './goals.js';
import { taskFor } from './tasks.js';
import { type Speaker } from '../events/principals.js';
import { type CommandOptions } from '../engine/handle.js';
import { sendSystemDirect } from './notifications.js';

/**
 * Resources (reference US6): an agent asks for a missing secret on a task (request_resource), sees
 * which names it can use (list_resources — names, scopes, availability, never values), and the owner's
 * `secrets set` fulfils the requests it answers.
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
  const agentId = agentIdOf(by);
  if (agentId === null)
    throw new DomainError(
      'ErrForbidden',
      'only agents request resources; the owner sets them with `colony secrets set`',
    );
  if (input.taskId === undefined) {
    throw new DomainError(
      'ErrMissingTaskContext',
      'request_resource needs task_id: the task the resource is for (resources are requested for a task)',
    );
  }
  const taskId = input.taskId;
  const name = secretName(input.name);
  const result = app.engine.transact(actor, (uow) => {
    const { task } = taskFor(app, by, taskId);
    const pending = pendingRequestOf(app.engine.db, agentId, taskId, name);
    if (pending) return { requestId: pending.requestId, messageId: pending.messageId, existing: true };
    const requestId = uow.ids.next(RESOURCE_REQUEST_KIND);
    const reason = input.reason.trim();
    const body =
      `Resource request #${requestId} from ${by.name}: ${name} (${input.resourceType}) for task #${taskId} "${task.title}" — ${reason}\n` +
      `Fulfil it with: colony secrets set ${name} - --scope agent:${by.name}   (or --scope task:${taskId}, or user:<owner>)`;
    const metadata = {
      kind: 'resource_request',
      request_id: requestId,
      resource_name: name,
      resource_type: input.resourceType,
      reason,
      task_id: taskId,
    };
    const sent = sendToChannel(
      app,
      by,
      { name: 'requests' },
      { body, subject: `Resource request: ${name}`, priority: 6, metadata, replyTo: null },
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

/** Whether a secret in `scope` reaches the requester: its agent, its task, or the owner's user scope (every agent's). */
const covers = (scope: SecretScope, r: { requesterAgentId: number; taskId: number }): boolean =>
  scope.type === 'user' ||
  (scope.type === 'agent' && scope.id === r.requesterAgentId) ||
  (scope.type === 'task' && scope.id === r.taskId);

/** Inside `secrets set`: marks the pending requests the new secret answers fulfilled and DMs each requester. */
export function fulfilRequests(
  app: App,
  by: Speaker,
  secret: { secretId: number; name: string; scope: SecretScope },
  actor: CommandOptions,
): number[] {
  const answered = pendingRequests(app.engine.db, by.tenant, secret.name).filter((r) => covers(secret.scope, r));
  for (const r of answered) {
    app.engine.handle(
      resourceDecider,
      resourceRequestStream(r.requestId),
      { type: 'FulfilRequest', secretId: secret.secretId, scope: secret.scope.label, by: who(by) },
      actor,
    );
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
  return answered.map((r) => r.requestId);
}

/** The owner declines a pending request with a reason: ResourceRequestRejected and a DM to the requester, in one command. */
export function rejectRequest(
  app: App,
  by: Speaker,
  requestId: number,
  reason: string,
  actor: CommandOptions,
): ResourceRequestRow {
  if (!isOwner(by)) throw new DomainError('ErrForbidden', 'only the owner rejects resource requests');
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
