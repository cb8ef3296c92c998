import type { BundleEvent } from './bundle.js';

/**
 * Which other streams an event of a goal's history names (check 7 of a bundle, and what the export
 * withholds): per event type, the data fields that hold a stream's id, and the stream kind they name. A
 * path is dot-separated keys; `key[]` means each element of that array. Kind `principal` is a principal
 * key (`user-N`, `agent-N`: the name of its stream; `system` names none); every other kind takes a
 * positive integer id and names `<kind>-<id>`. `*` applies to every event (a transition's notice names the
 * channel it posts to).
 *
 * tools/verify-bundle.mjs holds the same table, character for character apart from its syntax (a test
 * holds them equal): if the two disagreed, one verifier would refuse honest bundles the other accepts.
 * Left out on purpose: message ids (a message is not a stream), free text (evidence refs, notice metadata,
 * a tree proposal's requested verifiers — the tasks it becomes name them), and `by` fields that hold a name.
 */
export type RefKind = 'agent' | 'user' | 'task' | 'run' | 'proposal' | 'goal' | 'channel' | 'project' | 'principal';

export const REFERENCES: Readonly<Record<string, Readonly<Record<string, RefKind>>>> = {
  '*': { 'notice.channelId': 'channel' },
  // goal-N
  GoalCreated: { ownerId: 'user', channelId: 'channel', coordinatorAgentId: 'agent' },
  GoalActivated: { proposalId: 'proposal' },
  // channel-N
  ChannelCreated: { ownerId: 'user', 'members[]': 'principal' },
  MessagePosted: { from: 'principal' },
  ReactionAdded: { by: 'principal' },
  ReactionRemoved: { by: 'principal' },
  MessagesRead: { principal: 'principal' },
  // agent-N, user-N
  AgentRegistered: { ownerId: 'user', parentId: 'agent' },
  EvidenceRecorded: { ownerId: 'user' },
  // proposal-N
  TaskTreeProposed: { goalId: 'goal', ownerId: 'user', 'proposer.key': 'principal', channelId: 'channel' },
  AgentProposed: {
    goalId: 'goal',
    ownerId: 'user',
    parentTaskId: 'task',
    'proposer.key': 'principal',
    'proposer.agentId': 'agent',
    channelId: 'channel',
  },
  ProposalApproved: { 'by.key': 'principal', 'taskIds[]': 'task', agentId: 'agent' },
  ProposalRejected: { 'by.key': 'principal' },
  // task-N
  TaskCreated: {
    goalId: 'goal',
    ownerId: 'user',
    projectId: 'project',
    parentId: 'task',
    'ancestry[].id': 'task',
    'verifier.agent_id': 'agent',
    proposalId: 'proposal',
    channelId: 'channel',
    'by.key': 'principal',
  },
  TaskClaimed: { agentId: 'agent' },
  TaskStarted: { agentId: 'agent' },
  TaskCompleted: { agentId: 'agent' },
  TaskVerified: { goalId: 'goal', 'verifier.key': 'principal', assigneeAgentId: 'agent' },
  TaskReleased: { agentId: 'agent' },
  ClaimExpired: { agentId: 'agent' },
  TaskCancelled: { 'by.key': 'principal' },
  CostRecorded: { goalId: 'goal', 'by.key': 'principal', runId: 'run' },
  TaskDispatched: { 'by.key': 'principal' },
  TaskUpdated: { 'changes.projectId': 'project', 'by.key': 'principal' },
  TaskTimedOut: { agentId: 'agent', runId: 'run' },
  TaskBudgetAlertRaised: { goalId: 'goal' },
  // run-N
  RunQueued: { agentId: 'agent', ownerId: 'user', taskId: 'task', goalId: 'goal', 'wake.by': 'principal' },
  RunWakeMerged: { 'wake.by': 'principal' },
  RunRefused: { agentId: 'agent', ownerId: 'user', taskId: 'task', goalId: 'goal', 'wake.by': 'principal' },
  RunStarted: { agentId: 'agent' },
  RunLaunched: { agentId: 'agent' },
  RunFinished: { agentId: 'agent' },
  RunTimedOut: { agentId: 'agent' },
  RunFailed: { agentId: 'agent' },
};

/** A stream an event names, and the field that names it (`TaskCreated.parentId`). */
export interface NamedStream {
  streamId: string;
  field: string;
}

const PRINCIPAL = /^(user|agent)-[1-9][0-9]*$/;

type Path = { keys: string[]; kind: RefKind; field: string };
const compiled = new Map<string, Path[]>();

/** The table's paths for `type` (its own and `*`'s), split once per type. */
function pathsOf(type: string): Path[] {
  let paths = compiled.get(type);
  if (!paths) {
    const own = Object.hasOwn(REFERENCES, type) ? REFERENCES[type] : {};
    paths = Object.entries({ ...REFERENCES['*'], ...own }).map(([path, kind]) => ({
      keys: path.split('.'),
      kind,
      field: `${type}.${path}`,
    }));
    if (Object.hasOwn(REFERENCES, type)) compiled.set(type, paths); // unknown types are not cached: they are the file's
  }
  return paths;
}

/** The streams `e` names, in the table's order, each once. Values of another type (null, absent) name none. */
export function namedStreams(e: Pick<BundleEvent, 'type' | 'data'>): NamedStream[] {
  const out: NamedStream[] = [];
  for (const { keys, kind, field } of pathsOf(e.type)) {
    for (const value of valuesAt(e.data, keys)) {
      const streamId =
        kind === 'principal'
          ? typeof value === 'string' && PRINCIPAL.test(value)
            ? value
            : null
          : Number.isSafeInteger(value) && (value as number) > 0
            ? `${kind}-${value as number}`
            : null;
      if (streamId !== null && !out.some((n) => n.streamId === streamId)) out.push({ streamId, field });
    }
  }
  return out;
}

function valuesAt(value: unknown, keys: readonly string[]): unknown[] {
  if (keys.length === 0) return [value];
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [];
  const [key, ...rest] = keys as [string, ...string[]];
  const each = key.endsWith('[]');
  const inner = (value as Record<string, unknown>)[each ? key.slice(0, -2) : key];
  if (!each) return Object.hasOwn(value, key) ? valuesAt(inner, rest) : [];
  return Array.isArray(inner) ? inner.flatMap((item) => valuesAt(item, rest)) : [];
}
