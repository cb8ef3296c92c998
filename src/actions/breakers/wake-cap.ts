import type { Database } from 'better-sqlite3';
import { invalidInput } from '../../errors.js';
import type { TreeRequest } from '../../events/proposals.js';
import { breakerCutoff, tenantWakeCaps, wokenSince } from '../../projections/breaker-queries.js';
import { SCHEDULED } from './detectors.js';
import { breakerSettings, defaultBreakerSettings } from './settings.js';

/**
 * The wake-rate cap at creation time: a schedule that alone would wake an agent more often than its cap is
 * refused when it is made, with nothing written, rather than tripping the breaker an hour later. The
 * wake_rate breaker (detectors.ts) still counts what schedules and probes really fire.
 */
const HOUR_SEC = 3600;

/**
 * A task timer (heartbeat_config.interval_sec) wakes whoever claims the task: it is refused when it would
 * fire more often than the cap of every agent of the tenant (the highest cap; none when one has it off).
 */
export function checkTreeTimers(db: Database, ownerId: number, tree: TreeRequest, path = 'tree'): void {
  const fastest = fastestTimer(tree, path);
  if (!fastest) return;
  const caps = tenantWakeCaps(db, ownerId, defaultBreakerSettings().maxWakesPerHour);
  if (caps.anyOff || HOUR_SEC / fastest.intervalSec <= caps.highest) return;
  const field = `${fastest.path}.heartbeat_config.interval_sec`;
  throw invalidInput(
    `${field}: a task timer every ${fastest.intervalSec}s would wake its assignee ${Math.floor(HOUR_SEC / fastest.intervalSec)} times an hour, more than the wake cap of ${caps.highest} an hour; use an interval of at least ${Math.ceil(HOUR_SEC / caps.highest)}s (the owner raises an agent's cap with colony agents breakers NAME --max-wakes-per-hour N)`,
    { field, interval_sec: fastest.intervalSec, max_wakes_per_hour: caps.highest },
  );
}

function fastestTimer(node: TreeRequest, path: string): { intervalSec: number; path: string } | null {
  const own = node.heartbeat_config?.interval_sec;
  let best = own !== undefined && own > 0 ? { intervalSec: own, path } : null;
  (node.children ?? []).forEach((child, i) => {
    const c = fastestTimer(child, `${path}.children[${i}]`);
    if (c && (!best || c.intervalSec < best.intervalSec)) best = c;
  });
  return best;
}

/**
 * A new probe can fire once: it is refused (in xylocopa's words, "Error: …", as the probe tools answer) when the agent's active probes and its wake-ups from probes and
 * task timers in the last hour already reach its cap, since firing them all would wake it above the cap.
 */
export function checkProbeRoom(
  db: Database,
  agent: { agentId: number; name: string },
  active: number,
  now: string,
): void {
  const cap = breakerSettings(db, agent.agentId).maxWakesPerHour;
  if (cap === 0) return;
  const since = new Date(Date.parse(now) - HOUR_SEC * 1000).toISOString();
  const woken = wokenSince(db, agent.agentId, SCHEDULED, since, breakerCutoff(db, agent.agentId, null), cap).length;
  if (woken + active < cap) return;
  throw invalidInput(
    `Error: agent ${agent.name} has ${active} active probes and was woken ${woken} times by probes and task timers in the last hour; its wake cap is ${cap} an hour, so one more probe could wake it above the cap (the owner raises it with colony agents breakers ${agent.name} --max-wakes-per-hour N)`,
    { field: 'agent_id', active_probes: active, woken_last_hour: woken, max_wakes_per_hour: cap },
  );
}
