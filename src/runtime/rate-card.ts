import type { App } from '../app.js';
import { rateCardOf } from '../projections/principal-queries.js';
import type { RunReport } from './adapters/types.js';

/**
 * A run's cost from the team's rate card when its CLI reported tokens but no cost (Codex; OpenCode on a
 * model it has no price for): dollars per million tokens of the agent's model — by its full name, else
 * without the provider (`openai/gpt-5` → `gpt-5`). Null when the card has no rate for it: the cost stays
 * unknown, never zero.
 */
export function priceOf(
  app: App,
  ownerId: number,
  model: string,
  r: Pick<RunReport, 'tokensIn' | 'tokensOut' | 'cachedIn'>,
): number | null {
  const card = rateCardOf(app.engine.db, ownerId);
  const rate = card[model] ?? card[model.slice(model.indexOf('/') + 1)];
  if (!rate) return null;
  const fresh = Math.max(0, r.tokensIn - r.cachedIn);
  return (fresh * rate.input + r.cachedIn * (rate.cachedInput ?? rate.input) + r.tokensOut * rate.output) / 1e6;
}
