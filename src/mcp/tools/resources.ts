import * as z from 'zod';
import { listResources, rejectRequest, requestResource } from '../../actions/resources.js';
import { MAX_REASON, MIN_REASON } from '../../commands/resources.js';
import { RESOURCE_TYPES, type ResourceType } from '../../events/resources.js';
import { MAX_SECRET_NAME } from '../../events/secrets.js';
import { defineTool, type AnyTool } from '../tool.js';
import { speaker } from '../../events/principals.js';

/**
 * Resources an agent needs from its owner (a secret, a credential, a URL, a file): request_resource and list_resources, and the
 * owner's refuse_resource_request (fulfilling one is `colony secrets set`, which keeps the value out of
 * MCP). No tool ever returns a secret's value: agents get values only as environment variables of the
 * processes Colony starts for them.
 */
const request = defineTool({
  name: 'request_resource',
  title: 'Request a resource',
  description:
    'Asks your owner for a missing secret, credential, URL or file you need for a task. The request is recorded (pending) and posted to #requests as a structured message; when the owner sets a secret of that name for you, your task or the whole team, the request is fulfilled and you get a DM. The value then reaches you only as the environment variable NAME of the processes Colony starts — it is never returned by any tool (see list_resources for what is available). Asking again for the same name on the same task returns the pending request. Errors: ErrMissingTaskContext (no task_id), ErrTaskNotFound, ErrInvalidName (name must be ^[A-Z][A-Z0-9_]*$ once upper-cased), ErrForbidden (owners set secrets instead).',
  trust: 'write',
  surface: 'agent',
  module: 'resources',
  input: z.strictObject({
    name: z
      .string()
      .min(1)
      .max(MAX_SECRET_NAME)
      .describe('The environment variable name, ^[A-Z][A-Z0-9_]*$ (lower case is upper-cased), e.g. BREVO_API_KEY'),
    resource_type: z.enum(RESOURCE_TYPES as [ResourceType, ...ResourceType[]]),
    reason: z.string().trim().min(MIN_REASON).max(MAX_REASON).describe('What you need it for (shown to the owner)'),
    task_id: z.number().int().positive().optional().describe('The task the resource is for (required)'),
  }),
  output: z.object({ request_id: z.number().int(), request_message_id: z.number().int() }),
  handler(ctx, a) {
    const r = requestResource(
      ctx.app,
      speaker(ctx.caller),
      { name: a.name, resourceType: a.resource_type, reason: a.reason, taskId: a.task_id },
      ctx.command,
    );
    return { request_id: r.requestId, request_message_id: r.messageId };
  },
});

const list = defineTool({
  name: 'list_resources',
  title: 'List available resources',
  description:
    "Lists the secret names you can use, with their scope: your owner's user scope (shared by every agent), your own agent scope and — when you pass task_id — that task's scope. When one name is set in several scopes, the closest wins in your environment (task > agent > user). Only names and availability: values are never returned. Errors: ErrTaskNotFound.",
  trust: 'read',
  surface: 'agent',
  module: 'resources',
  input: z.strictObject({ task_id: z.number().int().positive().optional().describe("Include this task's scope") }),
  output: z.object({
    resources: z.array(
      z.object({ name: z.string(), scope: z.enum(['user', 'agent', 'task']), available: z.boolean() }),
    ),
  }),
  handler(ctx, a) {
    return { resources: listResources(ctx.app, speaker(ctx.caller), a.task_id) };
  },
});

const refuse = defineTool({
  name: 'refuse_resource_request',
  title: 'Refuse a resource request',
  description:
    'Owner only. Refuses a pending request_resource request with a reason: the request becomes rejected and the requesting agent gets the reason by DM, so it can work without the resource or ask differently. To grant a request instead, set the secret with `colony secrets set NAME - --scope agent:REQUESTER`. Errors: ErrNotFound (no such request of your team), ErrRequestNotPending (already fulfilled or rejected), ErrInvalidInput (blank reason).',
  trust: 'write',
  surface: 'owner',
  module: 'resources',
  input: z.strictObject({
    request_id: z
      .number()
      .int()
      .positive()
      .describe('The request (its id is in the #requests message and `colony requests list`)'),
    reason: z.string().trim().min(1).max(MAX_REASON).describe('Why it is refused (the agent reads it)'),
  }),
  output: z.object({
    request_id: z.number().int(),
    status: z.literal('rejected'),
    name: z.string(),
    task_id: z.number().int(),
    requester: z.string(),
    reason: z.string(),
  }),
  handler(ctx, a) {
    const r = rejectRequest(ctx.app, speaker(ctx.caller), a.request_id, a.reason, ctx.command);
    return {
      request_id: r.requestId,
      status: 'rejected' as const,
      name: r.name,
      task_id: r.taskId,
      requester: r.requesterName,
      reason: r.rejectionReason ?? a.reason,
    };
  },
});

export const resourceTools: readonly AnyTool[] = [request, list, refuse];
