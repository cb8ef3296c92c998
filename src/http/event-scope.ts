import type { Database } from 'better-sqlite3';
import { streamKind, type StoredEvent } from '../engine/event.js';
import { readStream } from '../engine/store.js';
import { ancestorsOf } from '../projections/principal-queries.js';

/**
 * Where a stream belongs, for `GET /api/events`: its tenant (the owner's user id), its goal, the agent it
 * is about and, for a direct conversation, its two members — read from the stream's first event, an
 * immutable fact, so the answer is cached for the life of the process (bounded: cleared at 100,000
 * streams) and costs one indexed read per stream, never a scan:
 *
 * - `user-<id>`: tenant `id` (an owner is its own tenant);
 * - `runtime-<agentId>`: the tenant of `agent-<agentId>`;
 * - every other kind (agent, goal, task, proposal, channel, run, secret, probe, project, webapp, verifier,
 *   resource-request): the `ownerId` its first event carries; a goal task written before tasks carried
 *   `ownerId` belongs to its goal's tenant;
 * - the goal: `goal-<id>` itself, else the `goalId` of the first event (tasks, proposals, runs, resource
 *   requests). A goal's channel carries no goal id: the goal filter adds `channel-<GoalCreated.channelId>`;
 * - the agent: `agent-<id>` and `runtime-<id>` are about agent `id`, `run-<id>` about its RunQueued's agent.
 *
 * A stream whose first event names no tenant (`chain-1`, the log's own acceptances of a broken chain)
 * belongs to nobody and is never streamed.
 */
export interface StreamScope {
  kind: string;
  tenant: number | null;
  goalId: number | null;
  agentId: number | null;
  /** The principal keys of a `dm` channel; null for every other stream. */
  members: readonly string[] | null;
}

const CACHE_CAP = 100_000;
const caches = new WeakMap<Database, Map<string, StreamScope>>();

/** `first`: the stream's version-1 event when the caller already holds it (saves the read). */
export function streamScope(db: Database, streamId: string, first?: StoredEvent): StreamScope {
  let cache = caches.get(db);
  if (!cache) caches.set(db, (cache = new Map()));
  const hit = cache.get(streamId);
  if (hit) return hit;
  const scope = resolve(db, streamId, first);
  if (cache.size >= CACHE_CAP) cache.clear();
  cache.set(streamId, scope);
  return scope;
}

function resolve(db: Database, streamId: string, first: StoredEvent | undefined): StreamScope {
  const kind = streamKind(streamId);
  const id = Number(streamId.slice(kind.length + 1));
  const none = { kind, tenant: null, goalId: null, agentId: null, members: null };
  if (kind === 'user') return { ...none, tenant: Number.isSafeInteger(id) ? id : null };
  if (kind === 'runtime') return { ...none, tenant: streamScope(db, `agent-${id}`).tenant, agentId: id };
  const event =
    first && first.streamId === streamId && first.version === 1 ? first : readStream(db, streamId, { max: 1 })[0];
  const data = (event?.data ?? {}) as Record<string, unknown>;
  const goalId = kind === 'goal' ? id : typeof data.goalId === 'number' ? data.goalId : null;
  const agentId = kind === 'agent' ? id : kind === 'run' && typeof data.agentId === 'number' ? data.agentId : null;
  const members =
    kind === 'channel' && data.kind === 'dm' && Array.isArray(data.members) ? (data.members as string[]) : null;
  const tenant =
    typeof data.ownerId === 'number'
      ? data.ownerId
      : goalId !== null && kind !== 'goal'
        ? streamScope(db, `goal-${goalId}`).tenant
        : null;
  return { kind, tenant, goalId, agentId, members };
}

/**
 * What an event's `data` shows on the stream. Never a credential or a ciphertext: `secret-*` events show
 * only their ids, name, scope and bookkeeping (never `sealed`), and any event drops `sealed` (TokenIssued's
 * sealed agent token), `sealedToken` and `tokenHash` (tokens' and probes' credentials), and the OAuth
 * grants' token hashes.
 */
const CREDENTIAL_FIELDS = new Set([
  'sealed',
  'sealedToken',
  'tokenHash',
  'accessTokenHash',
  'refreshTokenHash',
  'previousRefreshHash',
]);
const SECRET_FIELDS = new Set([
  'secretId',
  'ownerId',
  'name',
  'scope',
  'replaces',
  'reason',
  'replacedBy',
  'purpose',
  'taskId',
  'agentId',
  'by',
]);

export function visibleData(e: StoredEvent): unknown {
  const data = e.data;
  if (!data || typeof data !== 'object' || Array.isArray(data)) return data;
  const secret = streamKind(e.streamId) === 'secret';
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) {
    if (secret ? SECRET_FIELDS.has(key) : !CREDENTIAL_FIELDS.has(key)) out[key] = value;
  }
  return out;
}

/**
 * One SSE frame: `id` is the global position, `event` the type, `data` the event as JSON (one line) with
 * `goal_id`, the goal its stream belongs to (null for streams of no goal, and for a goal's channel, which
 * `?goal=` follows by its id), so that a page showing one goal can tell its events from the rest.
 */
export function eventFrame(db: Database, e: StoredEvent): string {
  const payload = {
    position: e.position,
    stream_id: e.streamId,
    version: e.version,
    type: e.type,
    goal_id: streamScope(db, e.streamId, e.version === 1 ? e : undefined).goalId,
    data: visibleData(e),
    recorded_at: e.recordedAt,
    actor: e.meta.actor,
  };
  return `id: ${e.position}\nevent: ${e.type.replace(/[\r\n]/g, '')}\ndata: ${JSON.stringify(payload)}\n\n`;
}

/**
 * What one connection shows. The owner: every stream of the tenant. An agent (signed in to the console)
 * what its read tools would show: the tenant's goals, tasks, proposals, projects, web apps, verifier
 * recipes and resource requests, every public channel and the direct conversations it is a member of,
 * and the agent, runtime and run streams of itself and the agents it spawned, at any depth (an agent's
 * transcripts are private to it and to the agents above it in its spawn lineage) — never a user's
 * stream (tokens), a secret, a probe, a peer's runs or a DM between others.
 */
export interface EventFilter {
  tenant: number;
  /** null for the owner. `readable`: which agents' runs it may read, answered once per agent (spawn lineage never changes). */
  agent: { agentId: number; key: string; readable: Map<number, boolean> } | null;
  goalId: number | null;
  /** `channel-<id>` of the goal's channel (its stream carries no goal id). */
  goalChannel: string | null;
  types: ReadonlySet<string> | null;
  /** Frames without the `event:` name (`?plain=1`). */
  plain?: boolean;
}

const TENANT_WIDE = new Set(['goal', 'task', 'proposal', 'project', 'webapp', 'verifier', 'resource-request']);
const OF_AN_AGENT = new Set(['agent', 'runtime', 'run']);

/** Whether the filter shows an event of this stream and type; `first`: the stream's version-1 event if at hand. */
export function shows(db: Database, filter: EventFilter, streamId: string, type: string, first?: StoredEvent): boolean {
  if (filter.types && !filter.types.has(type)) return false;
  const scope = streamScope(db, streamId, first);
  if (scope.tenant !== filter.tenant) return false;
  if (filter.goalId !== null && scope.goalId !== filter.goalId && streamId !== filter.goalChannel) return false;
  const { agent } = filter;
  if (!agent) return true;
  if (TENANT_WIDE.has(scope.kind)) return true;
  if (scope.kind === 'channel') return scope.members === null || scope.members.includes(agent.key);
  if (!OF_AN_AGENT.has(scope.kind) || scope.agentId === null) return false;
  let readable = agent.readable.get(scope.agentId);
  if (readable === undefined) {
    readable = scope.agentId === agent.agentId || ancestorsOf(db, scope.agentId).includes(agent.agentId);
    agent.readable.set(scope.agentId, readable);
  }
  return readable;
}
