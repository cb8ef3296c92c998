import { DomainError, invalidInput } from '../errors.js';
import { RESOURCE_TYPES, type RequestStatus, type ResourceEvent, type ResourceRequested } from '../events/resources.js';
import type { SecretScope } from '../events/secrets.js';
import type { Decider } from '../engine/decider.js';
import { secretName } from './secrets.js';
import { type By, isOwner } from '../events/principals.js';

/**
 * The resource-request decider (`resource-request-<id>` streams): an agent asks its owner for a missing
 * resource on a task; the request is recorded pending, then fulfilled once by a secret of its name set
 * in a scope that reaches the requester, or rejected once by the owner, with a reason. Which task, goal
 * and message the request belongs to are facts the caller looks up (and posts) first, inside the same
 * transaction.
 */
export type RequestResource = {
  type: 'RequestResource';
  /** `requesterAgentId`: null when the caller is no agent (the owner sets secrets instead of asking). */
  request: Omit<ResourceRequested['data'], 'requesterAgentId'> & { requesterAgentId: number | null };
};
export type FulfilRequest = {
  type: 'FulfilRequest';
  /** The secret just set: it answers a request for its name in a scope that reaches the requester. */
  secret: { secretId: number; name: string; scope: SecretScope };
  by: By;
  /** The owner answers this very request: a secret that does not answer it is refused, not passed over. */
  explicit: boolean;
};
export type RejectRequest = { type: 'RejectRequest'; reason: string; by: By };
export type ResourceCommand = RequestResource | FulfilRequest | RejectRequest;

export type ResourceRequest =
  | { status: 'absent' }
  | {
      status: RequestStatus;
      requestId: number;
      ownerId: number;
      name: string;
      requesterAgentId: number;
      taskId: number;
    };
type Live = Exclude<ResourceRequest, { status: 'absent' }>;

export const MIN_REASON = 5;
export const MAX_REASON = 2000;

function evolve(state: ResourceRequest, event: ResourceEvent): ResourceRequest {
  switch (event.type) {
    case 'ResourceRequested': {
      const { requestId, ownerId, name, requesterAgentId, taskId } = event.data;
      return { status: 'pending', requestId, ownerId, name, requesterAgentId, taskId };
    }
    case 'ResourceRequestFulfilled':
      return state.status === 'absent' ? state : { ...state, status: 'fulfilled' };
    case 'ResourceRequestRejected':
      return state.status === 'absent' ? state : { ...state, status: 'rejected' };
    default: {
      const never: never = event;
      return never;
    }
  }
}

/** Only agents ask: the owner sets the secret itself. */
function request(state: ResourceRequest, c: RequestResource): ResourceEvent[] {
  const r = c.request;
  const requesterAgentId = r.requesterAgentId;
  if (requesterAgentId === null)
    throw new DomainError(
      'ErrForbidden',
      'only agents request resources; the owner sets them with `colony secrets set`',
    );
  if (state.status !== 'absent')
    throw new DomainError('ErrRequestExists', `resource request ${r.requestId} already exists`);
  if (secretName(r.name) !== r.name)
    throw new DomainError('ErrInvalidName', `resource name ${r.name} is not normalized`, { name: r.name });
  if (!RESOURCE_TYPES.includes(r.resourceType))
    throw invalidInput(`resource_type must be one of ${RESOURCE_TYPES.join(', ')}`, { field: 'resource_type' });
  const reason = r.reason.trim();
  if (reason.length < MIN_REASON || reason.length > MAX_REASON)
    throw invalidInput(`reason must be ${MIN_REASON}–${MAX_REASON} characters`, { field: 'reason' });
  return [{ type: 'ResourceRequested', data: { ...r, requesterAgentId, reason } }];
}

/** A secret reaches the requester in the owner's user scope (every agent's), its agent scope, or its task's scope. */
const covers = (scope: SecretScope, r: Live): boolean =>
  scope.type === 'user' ||
  (scope.type === 'agent' && scope.id === r.requesterAgentId) ||
  (scope.type === 'task' && scope.id === r.taskId);

function mustBePending(state: ResourceRequest): Live {
  if (state.status === 'absent') throw new DomainError('ErrNotFound', 'resource request not found');
  if (state.status !== 'pending') {
    throw new DomainError(
      'ErrRequestNotPending',
      `resource request ${state.requestId} is ${state.status}, not pending`,
      {
        request_id: state.requestId,
        status: state.status,
      },
    );
  }
  return state;
}

function fulfil(state: ResourceRequest, c: FulfilRequest): ResourceEvent[] {
  const r = mustBePending(state);
  const { secretId, name, scope } = c.secret;
  if (name !== r.name || !covers(scope, r)) {
    if (!c.explicit) return [];
    throw new DomainError(
      'ErrRequestNotPending',
      `resource request ${r.requestId} was not fulfilled by the new secret`,
      {
        request_id: r.requestId,
      },
    );
  }
  return [
    { type: 'ResourceRequestFulfilled', data: { requestId: r.requestId, secretId, scope: scope.label, by: c.by } },
  ];
}

/** Only the owner declines a request, with a reason the requester reads. */
function reject(state: ResourceRequest, c: RejectRequest): ResourceEvent[] {
  if (state.status !== 'absent' && !isOwner(c.by, state.ownerId))
    throw new DomainError('ErrForbidden', 'only the owner rejects resource requests');
  const r = mustBePending(state);
  const reason = c.reason.trim();
  if (reason.length === 0 || reason.length > MAX_REASON)
    throw invalidInput(`reason must be 1–${MAX_REASON} characters`, { field: 'reason' });
  return [{ type: 'ResourceRequestRejected', data: { requestId: r.requestId, reason, by: c.by } }];
}

function decide(command: ResourceCommand, state: ResourceRequest): ResourceEvent[] {
  switch (command.type) {
    case 'RequestResource':
      return request(state, command);
    case 'FulfilRequest':
      return fulfil(state, command);
    case 'RejectRequest':
      return reject(state, command);
    default: {
      const never: never = command;
      return never;
    }
  }
}

export const resourceDecider: Decider<ResourceRequest, ResourceCommand, ResourceEvent> = {
  initialState: () => ({ status: 'absent' }),
  evolve,
  decide,
};
