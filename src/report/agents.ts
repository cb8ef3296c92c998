import type { App } from '../app.js';
import { reputationOf } from '../actions/reputation.js';
import { agentStream } from '../events/principals.js';
import type { EvidenceRecorded } from '../events/reputation.js';
import { readStream } from '../engine/store.js';
import type { GoalRow } from '../projections/goal-queries.js';
import type { TaskRow } from '../projections/task-queries.js';
import type { ProposalRow } from '../projections/proposal-queries.js';
import { getAgent, type AgentRow } from '../projections/principal-queries.js';
import type { RunRow } from '../projections/run-queries.js';
import { oneLine } from './timeline.js';

/**
 * The agents of a goal as the report shows them: who they are (name, short config hash,
 * parent, tier), how they came to work on it (coordinator, spawned by one of its agent proposals, or
 * assignee / runner only) and their reputation before — the seed their config started from — and now.
 */
export type AgentRole = 'coordinator' | 'spawned' | 'worker';
export interface DomainScore {
  domain: string;
  before: number | null;
  after: number;
  evidenceCount: number;
}
export interface ReportAgent {
  id: number;
  name: string;
  role: AgentRole;
  model: string;
  configHash: string;
  shortHash: string;
  parentName: string | null;
  tier: string;
  spawnDepth: number;
  quarantined: boolean;
  /** Mean over `domains` of the seed rows, null when the config has no seed row there; `after` is the rolling score now. */
  before: number | null;
  after: number;
  evidenceCount: number;
  domains: DomainScore[];
  promptPreview: string;
}

export const SHORT_HASH = 12;
export const PROMPT_PREVIEW = 160;

/** The coordinator first, then every agent an agent proposal of the goal spawned, then assignees and runners. */
export function agentsOfGoal(
  app: App,
  goal: GoalRow,
  tasks: readonly TaskRow[],
  proposals: readonly ProposalRow[],
  runs: readonly RunRow[],
): ReportAgent[] {
  const spawned = new Set(
    proposals.filter((p) => p.kind === 'agent' && p.status === 'approved' && p.agentId !== null).map((p) => p.agentId!),
  );
  const ids = [
    goal.coordinatorAgentId,
    ...spawned,
    ...tasks.map((t) => t.assigneeAgentId),
    ...runs.map((r) => r.agentId),
  ];
  const codes = new Set(tasks.map((t) => t.billingCode || 'default'));
  const agents = [...new Set(ids)]
    .filter((id): id is number => id !== null)
    .map((id) => getAgent(app.engine.db, id))
    .filter((a): a is AgentRow => a !== null);
  return agents.map((a) => {
    const role: AgentRole =
      a.agentId === goal.coordinatorAgentId ? 'coordinator' : spawned.has(a.agentId) ? 'spawned' : 'worker';
    const parent = a.parentId === null ? null : getAgent(app.engine.db, a.parentId);
    return {
      id: a.agentId,
      name: a.name,
      role,
      model: a.model,
      configHash: a.configHash,
      shortHash: a.configHash.slice(0, SHORT_HASH),
      parentName: parent?.name ?? null,
      tier: a.tier,
      spawnDepth: a.spawnDepth,
      quarantined: a.quarantined,
      ...reputation(app, a, codes),
      promptPreview: oneLine(a.systemPrompt, PROMPT_PREVIEW),
    };
  });
}

/**
 * Before and after in the goal's billing-code domains where the config has a record, else over all its
 * domains (the rolling mean `colony agents show` prints). The seed rows are read from the agent's stream.
 */
function reputation(
  app: App,
  agent: AgentRow,
  goalCodes: ReadonlySet<string>,
): Pick<ReportAgent, 'before' | 'after' | 'evidenceCount' | 'domains'> {
  const rep = reputationOf(app, agent);
  const seeds = new Map<string, number>();
  for (const e of readStream(app.engine.db, agentStream(agent.agentId))) {
    if (e.type !== 'EvidenceRecorded') continue;
    const d = (e as unknown as EvidenceRecorded).data;
    if (d.configHash === agent.configHash && d.ref.startsWith('seed') && !seeds.has(d.domain))
      seeds.set(d.domain, clamp(d.delta * d.weight));
  }
  const all = rep.domains.map((s) => ({
    domain: s.domain,
    before: seeds.get(s.domain) ?? null,
    after: s.score,
    evidenceCount: s.evidenceCount,
  }));
  const inGoal = all.filter((s) => goalCodes.has(s.domain));
  const shown = inGoal.length > 0 ? inGoal : all;
  const befores = shown.map((s) => s.before).filter((b): b is number => b !== null);
  return {
    before: befores.length > 0 ? mean(befores) : null,
    after: shown.length > 0 ? mean(shown.map((s) => s.after)) : rep.rollingScore,
    evidenceCount: rep.evidenceCount,
    domains: shown,
  };
}

const clamp = (n: number): number => Math.min(1, Math.max(0, n));
const mean = (xs: readonly number[]): number => xs.reduce((n, x) => n + x, 0) / xs.length;
