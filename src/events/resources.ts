import type { Event } from '../engine/event.js';
import { type By } from './principals.js';

/**
 * Resource requests (SynapBus's `resource_requests`): an agent asks its owner for a missing
 * secret, credential, URL or file for a task. Each request is a `resource-request-<id>` stream:
 * `pending → fulfilled` when the owner sets a secret of that name in a scope that reaches the requester,
 * or `pending → rejected` when the owner declines it with a reason (`revoked` is reserved). The
 * structured message in `#requests` is posted in the same command; its id is in the event.
 */
export type ResourceType = 'api_key' | 'credential' | 'url' | 'file' | 'other';
export const RESOURCE_TYPES: readonly ResourceType[] = ['api_key', 'credential', 'url', 'file', 'other'];
export type RequestStatus = 'pending' | 'fulfilled' | 'rejected' | 'revoked';

export type ResourceRequested = Event<
  'ResourceRequested',
  {
    requestId: number;
    ownerId: number;
    requesterAgentId: number;
    requesterName: string;
    taskId: number;
    /** Null for a project task (no goal). */
    goalId: number | null;
    name: string;
    resourceType: ResourceType;
    reason: string;
    messageId: number;
    channelId: number;
  }
>;

export type ResourceRequestFulfilled = Event<
  'ResourceRequestFulfilled',
  {
    requestId: number;
    secretId: number;
    /** The scope of the secret that fulfilled it, e.g. `agent:worker`. */
    scope: string;
    by: By;
  }
>;

export type ResourceRequestRejected = Event<
  'ResourceRequestRejected',
  {
    requestId: number;
    reason: string;
    by: By;
  }
>;

export type ResourceEvent = ResourceRequested | ResourceRequestFulfilled | ResourceRequestRejected;

export const resourceRequestStream = (requestId: number): string => `resource-request-${requestId}`;
/** The id kind of requests (`es_sequences`); equal to the stream kind so an import raises it. */
export const RESOURCE_REQUEST_KIND = 'resource-request';
