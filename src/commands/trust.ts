import { byCodePoint } from '../events/agent-config.js';
import { TIERS, type Tier } from '../events/principals.js';

/**
 * Trust, pure: the delegation cap (a child agent never gets more than its parent: SynapBus's
 * DelegationCap) and the rolling reputation score (evidence decays with a half-life).
 */
export interface Grant {
  tier: string;
  toolScope: readonly string[];
  budgetTokens: number;
  budgetCents: number;
  spawnDepth: number;
}
export interface Capped {
  effective: Grant;
  violations: string[];
  depthExceeded: boolean;
}

const rank = (tier: string): number => TIERS.indexOf(tier as Tier) + 1;

/**
 * A child's effective grant and every way it exceeds its parent's, in SynapBus's stable order: tier,
 * tools (sorted), budget_tokens, budget_dollars_cents, depth. Budgets: 0 is unlimited for the parent,
 * inherit for the child.
 */
export function delegationCap(parent: Grant, proposed: Grant, maxDepth: number): Capped {
  const violations: string[] = [];
  const parentRank = rank(parent.tier) || 1;
  let childRank = rank(proposed.tier);
  if (childRank === 0) {
    violations.push(`unknown autonomy tier "${proposed.tier}" (treating as supervised)`);
    childRank = 1;
  }
  let tier = TIERS[childRank - 1]!;
  if (childRank > parentRank) {
    violations.push(`autonomy tier "${proposed.tier}" exceeds parent tier "${TIERS[parentRank - 1]}"`);
    tier = TIERS[parentRank - 1]!;
  }
  const allowed = new Set(parent.toolScope);
  const tools = [...new Set(proposed.toolScope)].sort(byCodePoint);
  for (const tool of tools) if (!allowed.has(tool)) violations.push(`tool "${tool}" not in parent scope`);
  const budget = (name: string, p: number, c: number): number => {
    if (c < 0) {
      violations.push(`${name} ${c} is negative`);
      return p > 0 ? 0 : 0;
    }
    if (p === 0) return c;
    if (c === 0) return p;
    if (c > p) {
      violations.push(`${name} ${c} exceeds parent cap ${p}`);
      return p;
    }
    return c;
  };
  const budgetTokens = budget('budget_tokens', parent.budgetTokens, proposed.budgetTokens);
  const budgetCents = budget('budget_dollars_cents', parent.budgetCents, proposed.budgetCents);
  const spawnDepth = parent.spawnDepth + 1;
  const depthExceeded = spawnDepth > maxDepth;
  if (depthExceeded) violations.push(`spawn depth ${spawnDepth} exceeds max ${maxDepth}`);
  return {
    effective: { tier, toolScope: tools.filter((t) => allowed.has(t)), budgetTokens, budgetCents, spawnDepth },
    violations,
    depthExceeded,
  };
}

export interface Evidence {
  delta: number;
  weight: number;
  at: string;
}
export const DEFAULT_HALF_LIFE_DAYS = 30;
const LN2 = 0.6931471805599453;
const DAY_MS = 86_400_000;

/** Σ delta·weight·exp(−ln2·age/half-life), clamped to [0, 1]; 0.5 without evidence. */
export function rollingScore(
  evidence: readonly Evidence[],
  now: string,
  halfLifeDays = DEFAULT_HALF_LIFE_DAYS,
): number {
  if (evidence.length === 0) return 0.5;
  const h = halfLifeDays > 0 ? halfLifeDays : DEFAULT_HALF_LIFE_DAYS;
  const t = Date.parse(now);
  let sum = 0;
  for (const e of evidence) sum += e.delta * e.weight * Math.exp((-LN2 * ((t - Date.parse(e.at)) / DAY_MS)) / h);
  return Math.min(1, Math.max(0, sum));
}
