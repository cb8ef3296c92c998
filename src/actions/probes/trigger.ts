import type { App } from '../../app.js';
import { probeDecider, probeEnvelope, validateMessage } from '../../commands/probes.js';
import { probeStream, type ProbeBurnReason } from '../../events/probes.js';
import { getAgent } from '../../projections/principals.js';
import { getProbe, probeByTokenHash, type ProbeRow } from '../../projections/probes.js';
import { tokenHash } from '../../tokens.js';
import { type CommandOptions } from '../../engine/handle.js';
import { sendSystemDirect } from '../notifications.js';

/**
 * The probe trigger (`POST /probes/<token>`, reference §1.5 "Probe trigger"): the token is the
 * credential. A probe fires once: in one transaction it is marked fired and its message, wrapped in the
 * envelope, is posted to the agent as a DM from `system` carrying `{probe_id}` — which the reactor turns
 * into a wake-up with source `probe` after commit. (The DM is appended first only because ProbeFired
 * names its message id; both commit together or not at all, so a probe can never fire twice.)
 * Unknown, fired and expired tokens write nothing; a probe whose agent is gone or whose stored message
 * fails re-validation is burned (used up without delivery), as xylocopa does.
 */
export interface TriggerOutcome {
  status: 200 | 404 | 410 | 422;
  body: Record<string, unknown>;
}

const refusal = (status: TriggerOutcome['status'], code: string, message: string): TriggerOutcome => ({
  status,
  body: { detail: message, error: { code, message } },
});

export function fireProbe(app: App, token: string): TriggerOutcome {
  const found = probeByTokenHash(app.engine.db, tokenHash(token));
  if (!found) return refusal(404, 'ErrProbeNotFound', 'Probe not found');
  const actor: CommandOptions = { actor: `probe:${found.probeId}` };
  return app.engine.transact(actor, (uow) => trigger(app, getProbe(app.engine.db, found.probeId)!, uow.now, actor))
    .value!;
}

function trigger(app: App, probe: ProbeRow, now: string, actor: CommandOptions): TriggerOutcome {
  if (probe.firedAt !== null) return refusal(410, 'ErrProbeFired', `Probe already fired at ${probe.firedAt}`);
  if (Date.parse(probe.expiresAt) <= Date.parse(now))
    return refusal(410, 'ErrProbeExpired', `Probe expired at ${probe.expiresAt}`);
  const agent = getAgent(app.engine.db, probe.agentId);
  if (!agent)
    return burn(
      app,
      probe,
      'agent_missing',
      `agent ${probe.agentId} no longer exists`,
      actor,
      refusal(404, 'ErrAgentNotFound', 'Target agent no longer exists'),
    );
  const invalid = validateMessage(probe.message);
  if (invalid !== null) {
    return burn(
      app,
      probe,
      'invalid_message',
      invalid,
      actor,
      refusal(422, 'ErrInvalidProbeMessage', `Probe message failed validation: ${invalid}`),
    );
  }
  const envelope = probeEnvelope(probe.probeId, now, probe.message);
  const sent = sendSystemDirect(
    app,
    probe.ownerId,
    `agent-${agent.agentId}`,
    envelope,
    { probe_id: probe.probeId },
    actor,
  );
  app.engine.handle(probeDecider, probeStream(probe.n), { type: 'FireProbe', messageId: sent.messageId }, actor);
  return {
    status: 200,
    body: {
      status: 'ok',
      probe_id: probe.probeId,
      agent_id: String(agent.agentId),
      message_id: sent.messageId,
      fired_at: now,
    },
  };
}

function burn(
  app: App,
  probe: ProbeRow,
  reason: ProbeBurnReason,
  detail: string,
  actor: CommandOptions,
  outcome: TriggerOutcome,
): TriggerOutcome {
  app.engine.handle(probeDecider, probeStream(probe.n), { type: 'BurnProbe', reason, detail }, actor);
  return outcome;
}
