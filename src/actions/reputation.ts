import type { App } from '../app.js';
import { reputationDecider, type DomainRecord } from '../commands/reputation.js';
import { DomainError } from '../errors.js';
import { agentStream } from '../events/principals.js';
import type { TaskVerified } from '../events/tasks.js';
import { getAgent, type AgentRow } from '../projections/principal-queries.js';
import { hasEvidence, meanScore, scoreOf, scoresOf, type Score } from '../projections/reputation.js';
import { type CommandOptions } from '../engine/handle.js';
import { sendSystemDirect } from './notifications.js';

/**
 * Reputation commands: seed rows, evidence from verdicts, the quarantine check that runs whenever evidence
 * is appended, and the owner's unquarantine; the reputation decider decides them (commands/reputation.ts),
 * these functions read its facts and route. Settings come from the environment:
 * COLONY_REPUTATION_HALF_LIFE_DAYS (30), COLONY_QUARANTINE_THRESHOLD (0.3) and
 * COLONY_REPUTATION_DELTAS ("peer=0.1,command=0.1,auto=0.05,owner=0.1,reject=-0.2"; owner: the owner's own verdict).
 */
export interface ReputationSettings {
  halfLifeDays: number;
  threshold: number;
  deltas: Record<'peer' | 'command' | 'auto' | 'owner' | 'reject', number>;
}

export function reputationSettings(env: NodeJS.ProcessEnv = process.env): ReputationSettings {
  const num = (name: string, fallback: number, ok: (n: number) => boolean): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || !ok(n))
      throw new DomainError('ErrInvalidConfig', `${name}="${raw}" is not a valid value`);
    return n;
  };
  const deltas = { peer: 0.1, command: 0.1, auto: 0.05, owner: 0.1, reject: -0.2 };
  for (const pair of (env.COLONY_REPUTATION_DELTAS ?? '').split(',').filter(Boolean)) {
    const [key, value] = pair.split('=');
    if (!key || !(key in deltas) || value === undefined || !Number.isFinite(Number(value))) {
      throw new DomainError(
        'ErrInvalidConfig',
        `COLONY_REPUTATION_DELTAS: "${pair}" is not kind=number (kinds: peer, command, auto, owner, reject)`,
      );
    }
    deltas[key as keyof typeof deltas] = Number(value);
  }
  return {
    halfLifeDays: num('COLONY_REPUTATION_HALF_LIFE_DAYS', 30, (n) => n > 0),
    threshold: num('COLONY_QUARANTINE_THRESHOLD', 0.3, (n) => n >= 0 && n <= 1),
    deltas,
  };
}

/**
 * Appends one piece of evidence for the agent's config (after its domain's seed row when it is the first
 * there), then the quarantine check. The reputation decider decides both (commands/reputation.ts).
 */
export function recordEvidence(
  app: App,
  agent: AgentRow,
  domain: string,
  delta: number,
  ref: string,
  actor: CommandOptions,
  configHash = agent.configHash,
): void {
  app.engine.transact(actor, () => {
    const stream = agentStream(agent.agentId);
    const settings = reputationSettings();
    const now = app.engine.clock().toISOString();
    const evidence = { agentId: agent.agentId, ownerId: agent.ownerId, configHash, domain, delta, weight: 1, ref };
    const record = domainRecord(app, agent, configHash, domain, now, settings.halfLifeDays);
    app.engine.handle(reputationDecider, stream, { type: 'RecordEvidence', evidence, record }, actor);
    // Quarantine is about the agent as it is now: its current config's scores, wherever this evidence went.
    // The mean reads all of the config's evidence, so it is looked up only when the decider can use it.
    const mean =
      delta < 0
        ? meanScore(scoresOf(app.engine.db, agent.ownerId, agent.configHash, now, settings.halfLifeDays))
        : null;
    const { events } = app.engine.handle(
      reputationDecider,
      stream,
      { type: 'CheckQuarantine', agentId: agent.agentId, delta, meanScore: mean, threshold: settings.threshold },
      actor,
    );
    const quarantined = events.find((e) => e.type === 'AgentQuarantined');
    if (quarantined) {
      sendSystemDirect(
        app,
        agent.ownerId,
        `user-${agent.ownerId}`,
        `Agent ${agent.name} was quarantined: ${quarantined.data.reason}. It may call only read tools and claim nothing until you lift it (unquarantine_agent).`,
        { event: 'AgentQuarantined', agent_id: agent.agentId },
        actor,
      );
    }
  });
}

/**
 * The config's record in the domain: whether it has started and, for one that has not, its parent's
 * config and current score there (an index probe first: every verdict asks, and an agent's evidence only grows).
 */
function domainRecord(
  app: App,
  agent: AgentRow,
  configHash: string,
  domain: string,
  now: string,
  halfLifeDays: number,
): DomainRecord {
  if (hasEvidence(app.engine.db, agent.ownerId, configHash, domain)) return { started: true, parent: null };
  const parent = agent.parentId === null ? null : getAgent(app.engine.db, agent.parentId);
  if (!parent) return { started: false, parent: null };
  const score = scoreOf(app.engine.db, parent.ownerId, parent.configHash, domain, now, halfLifeDays).score;
  return { started: false, parent: { configHash: parent.configHash, score } };
}

/** Starts the agent's record in `domain` from `parent`'s score there (null: a root agent's bootstrap seed). */
export function seedRecord(
  app: App,
  agent: AgentRow,
  domain: string,
  parent: DomainRecord['parent'],
  actor: CommandOptions,
): void {
  const started = hasEvidence(app.engine.db, agent.ownerId, agent.configHash, domain);
  app.engine.handle(
    reputationDecider,
    agentStream(agent.agentId),
    {
      type: 'SeedRecord',
      evidence: { agentId: agent.agentId, ownerId: agent.ownerId, configHash: agent.configHash, domain },
      record: { started, parent },
    },
    actor,
  );
}

/** A root agent's record in `default` starts at the bootstrap score. */
export function seedRootReputation(app: App, agent: AgentRow, actor: CommandOptions): void {
  seedRecord(app, agent, 'default', null, actor);
}

/**
 * Evidence from each verdict among `events` that ends an attempt (done, or failed) for the task's assignee
 * (domain = billing code, else default).
 */
export function recordVerdicts(
  app: App,
  events: readonly { type: string; data: unknown }[],
  actor: CommandOptions,
): void {
  const { deltas } = reputationSettings();
  for (const e of events) {
    if (e.type !== 'TaskVerified') continue;
    const v = e.data as TaskVerified['data'];
    // A rejection sent back within the goal's retry limit is feedback in a loop, not the attempt's outcome
    // (counted, a new agent's first one would quarantine it before its retry): the verdict that ends it is.
    if (v.returned) continue;
    const agent = v.assigneeAgentId === null ? null : getAgent(app.engine.db, v.assigneeAgentId);
    if (!agent) continue;
    const delta = v.verdict === 'reject' ? deltas.reject : deltas[v.verifierKind];
    // Evidence belongs to the config the work was done under: a config changed since the claim keeps its own record.
    recordEvidence(
      app,
      agent,
      v.domain,
      delta,
      `task:${v.taskId} verified=${v.verifierKind}:${v.verifier.name} verdict=${v.verdict}`,
      actor,
      v.assigneeConfigHash ?? agent.configHash,
    );
  }
}

export interface Reputation {
  configHash: string;
  rollingScore: number;
  evidenceCount: number;
  lastEvidenceAt: string | null;
  domains: Score[];
  quarantined: boolean;
}

/** GET /api/agents/:id/reputation and `colony agents show`: the agent's current config hash and its scores now. */
export function reputationOf(app: App, agent: AgentRow): Reputation {
  const { halfLifeDays } = reputationSettings();
  const domains = scoresOf(
    app.engine.db,
    agent.ownerId,
    agent.configHash,
    app.engine.clock().toISOString(),
    halfLifeDays,
  );
  return {
    configHash: agent.configHash,
    rollingScore: meanScore(domains),
    evidenceCount: domains.reduce((n, d) => n + d.evidenceCount, 0),
    lastEvidenceAt:
      domains
        .map((d) => d.lastEvidenceAt)
        .filter((x): x is string => x !== null)
        .sort()
        .pop() ?? null,
    domains,
    quarantined: agent.quarantined,
  };
}

/** The owner lifts a quarantine; reputation is unchanged. */
export function unquarantineAgent(
  app: App,
  ownerId: number,
  agentId: number,
  by: string,
  actor: CommandOptions,
): AgentRow {
  const agent = getAgent(app.engine.db, agentId);
  if (!agent || agent.ownerId !== ownerId)
    throw new DomainError('ErrNotFound', `agent ${agentId} not found`, { agent_id: agentId });
  app.engine.handle(reputationDecider, agentStream(agentId), { type: 'Unquarantine', agentId, by }, actor);
  return getAgent(app.engine.db, agentId)!;
}
