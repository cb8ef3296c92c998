import type { App } from '../app.js';
import type { CommandOptions } from '../engine/handle.js';
import { notFound } from '../errors.js';
import type { Speaker } from '../events/principals.js';
import { getChannelByName } from '../projections/channel-queries.js';
import { ensureDmUnit, ensureFixedChannel, isFixedChannel, post, postTo, sentIn, type Sent } from './channels.js';
import { runUnit, type Unit } from '../engine/unit-of-work.js';

/**
 * Notifications: what Colony itself tells a team, as the `system` principal — task transitions, budget
 * alerts, verdicts, approval cards, secret warnings. They travel as ordinary messages, so an agent reads
 * them with read_inbox like any other, and `from_kind: system` tells them apart from anything an agent
 * could write.
 */
const systemOf = (tenant: number): Speaker => ({ key: 'system', name: 'system', tenant });

/** A system message (task transitions, alerts) to a tenant's channel, creating a fixed one if needed. */
export function postSystemMessage(
  app: App,
  tenant: number,
  channelName: string,
  body: string,
  metadata: Record<string, unknown> | null,
  actor: CommandOptions,
): Sent {
  const system = systemOf(tenant);
  return post(
    app,
    actor,
    () => {
      const existing = getChannelByName(app.engine.db, tenant, channelName);
      if (existing) return existing.channelId;
      if (!isFixedChannel(channelName)) throw notFound(`channel #${channelName}`);
      return ensureFixedChannel(app, tenant, channelName, actor);
    },
    system,
    'system',
    { body, subject: null, priority: 5, metadata: { kind: 'system', ...metadata }, replyTo: null },
  );
}

/** A system message straight to one principal's inbox (alerts, verdicts, decisions), in a dm channel with `system`. */
export function sendSystemDirect(
  app: App,
  tenant: number,
  to: string,
  body: string,
  metadata: Record<string, unknown> | null,
  actor: CommandOptions,
): Sent {
  const result = runUnit(app.engine, actor, () => sendSystemDirectUnit(tenant, to, body, metadata));
  return result.value ?? sentIn(result.events);
}

export function* sendSystemDirectUnit(
  tenant: number,
  to: string,
  body: string,
  metadata: Record<string, unknown> | null,
): Unit<Sent> {
  const channelId = yield* ensureDmUnit(tenant, 'system', to);
  return yield* postTo(channelId, systemOf(tenant), 'system', {
    body,
    subject: null,
    priority: 7,
    metadata: { kind: 'system', ...metadata },
    replyTo: null,
  });
}
