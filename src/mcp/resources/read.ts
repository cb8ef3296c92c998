import type { McpContext } from '../context.js';
import { FAMILY_OF, requireFamily } from './access.js';
import { agentResource } from './agents.js';
import { goalResource, goalTreeResource } from './goals.js';
import { runResource, runTranscriptResource } from './runs.js';
import { JSON_MIME, MARKDOWN_MIME, type ResourceContents } from './types.js';
import { parseResourceUri, type ResourceRef } from './uris.js';
import { type Caller } from '../../events/principals.js';

/**
 * resources/read: parse (ErrInvalidInput when malformed), check the caller's tool scope for the family
 * (ErrToolNotInScope, before any lookup), then read through the family's renderer, which answers
 * ErrNotFound for what does not exist or is not the caller's to see. The URI is echoed as given.
 */

export function readResource(ctx: McpContext, caller: Caller, uri: string): ResourceContents[] {
  const ref = parseResourceUri(uri);
  requireFamily(caller, FAMILY_OF[ref.kind], uri);
  return [contentsOf(ctx, caller, ref, uri)];
}

function contentsOf(ctx: McpContext, caller: Caller, ref: ResourceRef, uri: string): ResourceContents {
  const json = (value: unknown): ResourceContents => ({
    uri,
    mimeType: JSON_MIME,
    text: JSON.stringify(value, null, 2),
  });
  switch (ref.kind) {
    case 'goal':
      return json(goalResource(ctx, caller, ref.goalId));
    case 'goal_tree':
      return json(goalTreeResource(ctx, caller, ref.goalId));
    case 'agent':
      return json(agentResource(ctx, caller, ref.name));
    case 'run':
      return json(runResource(ctx, caller, ref.runId));
    case 'run_transcript':
      return { uri, mimeType: MARKDOWN_MIME, text: runTranscriptResource(ctx, caller, ref.runId) };
    default: {
      const never: never = ref;
      return never;
    }
  }
}
