import { DomainError, invalidInput } from '../../errors.js';

/**
 * Colony's resource URIs, parsed in one place so every reader, lister and change feed spells them the
 * same way. A URI that is not `colony://` or whose id is not an id is malformed (ErrInvalidInput); a
 * well-formed `colony://` URI of no kind Colony serves names nothing (ErrNotFound), like an unknown id.
 */
export type ResourceRef =
  | { kind: 'goal'; goalId: number }
  | { kind: 'goal_tree'; goalId: number }
  | { kind: 'agent'; name: string }
  | { kind: 'run'; runId: number }
  | { kind: 'run_transcript'; runId: number };

export const SCHEME = 'colony://';

export const goalUri = (goalId: number): string => `${SCHEME}goals/${goalId}`;
export const goalTreeUri = (goalId: number): string => `${SCHEME}goals/${goalId}/tree`;
// Names are [a-z0-9-] today; encoding keeps the URI well-formed whatever a future name rule allows.
export const agentUri = (name: string): string => `${SCHEME}agents/${encodeURIComponent(name)}`;
export const runUri = (runId: number): string => `${SCHEME}runs/${runId}`;
export const runTranscriptUri = (runId: number): string => `${SCHEME}runs/${runId}/transcript`;

export function uriOf(ref: ResourceRef): string {
  switch (ref.kind) {
    case 'goal':
      return goalUri(ref.goalId);
    case 'goal_tree':
      return goalTreeUri(ref.goalId);
    case 'agent':
      return agentUri(ref.name);
    case 'run':
      return runUri(ref.runId);
    case 'run_transcript':
      return runTranscriptUri(ref.runId);
    default: {
      const never: never = ref;
      return never;
    }
  }
}

const MAX_URI = 1000;

export function parseResourceUri(uri: string): ResourceRef {
  if (typeof uri !== 'string' || uri.length > MAX_URI || !uri.startsWith(SCHEME)) {
    throw invalidInput(`malformed resource URI: expected colony://…, e.g. colony://goals/1`, {
      uri: String(uri).slice(0, 200),
    });
  }
  const parts = uri.slice(SCHEME.length).split('/');
  const [collection, id, sub, ...rest] = parts;
  if (rest.length > 0) throw unknownUri(uri);
  switch (collection) {
    case 'goals': {
      const goalId = idOf(uri, id, 'goal id');
      if (sub === undefined) return { kind: 'goal', goalId };
      if (sub === 'tree') return { kind: 'goal_tree', goalId };
      throw unknownUri(uri);
    }
    case 'runs': {
      const runId = idOf(uri, id, 'run id');
      if (sub === undefined) return { kind: 'run', runId };
      if (sub === 'transcript') return { kind: 'run_transcript', runId };
      throw unknownUri(uri);
    }
    case 'agents': {
      if (sub !== undefined) throw unknownUri(uri);
      return { kind: 'agent', name: nameOf(uri, id) };
    }
    default:
      throw unknownUri(uri);
  }
}

function idOf(uri: string, text: string | undefined, what: string): number {
  const n = Number(text);
  if (text === undefined || !/^[1-9][0-9]*$/.test(text) || !Number.isSafeInteger(n)) {
    throw invalidInput(`malformed resource URI ${uri}: the ${what} must be a positive integer`, { uri });
  }
  return n;
}

function nameOf(uri: string, text: string | undefined): string {
  let name: string;
  try {
    name = decodeURIComponent(text ?? '');
  } catch {
    throw invalidInput(`malformed resource URI ${uri}: bad percent-encoding in the agent name`, { uri });
  }
  if (name.length < 1 || name.length > 64 || /[\u0000-\u001f/]/.test(name)) {
    throw invalidInput(`malformed resource URI ${uri}: the agent name must be 1–64 characters`, { uri });
  }
  return name;
}

/** Well-formed but not a kind Colony serves: nothing by that name, as for an unknown id. */
const unknownUri = (uri: string): DomainError =>
  new DomainError(
    'ErrNotFound',
    `resource ${uri} not found; Colony serves colony://goals/{id}, colony://goals/{id}/tree, colony://agents/{name}, colony://runs/{id} and colony://runs/{id}/transcript`,
    { uri },
  );
