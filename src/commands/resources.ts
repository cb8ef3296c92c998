import { DomainError, invalidInput } from '../errors.js';
import { RESOURCE_TYPES, type RequestStatus, type ResourceEvent, type ResourceRequested } from '../events/resources.js';
import type { Decider } from '../engine/decider.js';
import { secretName } from './secrets.js';
import { type By } from '../events/principals.js';

/**
 * The resource-request decider (`resource-request-<id>` streams): recorded pending, then fulfilled once by
 * a secret the owner sets or rejected once by the owner, with a reason. Which task, goal and message the
 * request belongs to are facts the caller looks up (and posts) first, inside the same transaction.
 */
export type RequestResource = { type: 'RequestResource'; request: ResourceRequested['data'] };
export type FulfilRequest = { type: 'FulfilRequest'; secretId: number; scope: string; by: By };
export type RejectRequest = { type: 'RejectRequest'; reason: string; by: By };
export type ResourceCommand = RequestResource | FulfilRequest | RejectRequest;

export type ResourceRequest =
  | { status: 'absent' }
  | { status: RequestStatus; requestId: number; name: string; requesterAgentId: number; taskId: number };

export const MIN_REASON = 5;
export const MAX_REASON = 2000;

function evolve(state: ResourceRequest, event: ResourceEvent): ResourceRequest {
  switch (event.type) {
    case 'ResourceRequested': {
      const d = event.data;
      return {
        status: 'pending',
        requestId: d.requestId,
        name: d.name,
        requesterAgentId: d.requesterAgentId,
        taskId: d.taskId,
      };
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

function decide(command: ResourceCommand, state: ResourceRequest): ResourceEvent[] {
  switch (command.type) {
    case 'RequestResource': {
      const r = command.request;
      if (state.status !== 'absent')
        throw new DomainError('ErrRequestExists', `resource request ${r.requestId} already exists`);
      if (secretName(r.name) !== r.name)
        throw new DomainError('ErrInvalidName', `resource name ${r.name} is not normalized`, { name: r.name });
      if (!RESOURCE_TYPES.includes(r.resourceType))
        throw invalidInput(`resource_type must be one of ${RESOURCE_TYPES.join(', ')}`, { field: 'resource_type' });
      const reason = r.reason.trim();
      if (reason.length < MIN_REASON || reason.length > MAX_REASON)
        throw invalidInput(`reason must be ${MIN_REASON}–${MAX_REASON} characters`, { field: 'reason' });
      return [{ type: 'ResourceRequested', data: { ...r, reason } }];
    }
    case 'FulfilRequest':
      if (state.status === 'absent') throw new DomainError('ErrNotFound', 'resource request not found');
      if (state.status !== 'pending') {
        throw new DomainError(
          'ErrRequestNotPending',
          `resource request ${state.requestId} is ${state.status}, not pending`,
          { request_id: state.requestId, status: state.status },
        );
      }
      return [
        {
          type: 'ResourceRequestFulfilled',
          data: { requestId: state.requestId, secretId: command.secretId, scope: command.scope, by: command.by },
        },
      ];
    case 'RejectRequest': {
      if (state.status === 'absent') throw new DomainError('ErrNotFound', 'resource request not found');
      if (state.status !== 'pending') {
        throw new DomainError(
          'ErrRequestNotPending',
          `resource request ${state.requestId} is ${state.status}, not pending`,
          { request_id: state.requestId, status: state.status },
        );
      }
      const reason = command.reason.trim();
      if (reason.length === 0 || reason.length > MAX_REASON)
        throw invalidInput(`reason must be 1–${MAX_REASON} characters`, { field: 'reason' });
      return [{ type: 'ResourceRequestRejected', data: { requestId: state.requestId, reason, by: command.by } }];
    }
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
