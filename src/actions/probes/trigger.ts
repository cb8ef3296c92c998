import type { App } from '../../app.js';
import { probeDecider, probeEnvelope } from '../../commands/probes.js';
import { DomainError } from '../../errors.js';
import { probeStream } from '../../events/probes.js';
import { getAgent } from '../../projections/principal-queries.js';
import { getProbe, probeByTokenHash, type ProbeRow } from '../../projections/probes.js';
import { tokenHash } from '../../tokens.js';
import { type CommandOptions } from '../../engine/handle.js';
import { sendSystemDirect } from '../notifications.js';

/**
 * The probe trigger (`POST /probes/<token>`, xylocopa's "probe trigger"): the token is the credential. A
 * probe fires once: in one transaction it is marked fired and its message, wrapped in the envelope that
 * names its creator, is delivered to the agent in its DM with `system` carrying `{probe_id, probe_by,
 * probe_by_name}` — which the reactor turns into a wake-up with source `probe`, by the creator, after
 * commit (runtime/wake-sources.ts). Colony only carries the words: the envelope and the wake say whose
 * they are, never `system`. (The DM is appended first only because ProbeFired names its message
 * id; both commit together or not at all, so a probe can never fire twice.) The probe decider rules first
 * (TriggerProbe): fired and expired probes are refused and write nothing; a probe whose agent is gone or
 * whose stored message fails re-validation is burned (used up without delivery), as xylocopa does.
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
  try {
    return app.engine.transact(actor, (uow) => trigger(app, getProbe(app.engine.db, found.probeId)!, uow.now, actor))
      .value!;
  } catch (e) {
    if (!(e instanceof DomainError) || (e.code !== 'ErrProbeFired' && e.code !== 'ErrProbeExpired')) throw e;
    // Gone: 410. An expiry event pulls the read model's expires_at back to when it happened, which the
    // probe's own stream does not record: the answer names that time.
    const message =
      e.code === 'ErrProbeExpired'
        ? `Probe expired at ${getProbe(app.engine.db, found.probeId)!.expiresAt}`
        : e.message;
    return refusal(410, e.code, message);
  }
}

function trigger(app: App, probe: ProbeRow, now: string, actor: CommandOptions): TriggerOutcome {
  const agentExists = getAgent(app.engine.db, probe.agentId) !== null;
  const stream = probeStream(probe.n);
  const ruled = app.engine.handle(probeDecider, stream, { type: 'TriggerProbe', agentExists }, actor);
  const burned = ruled.events.find((e) => e.type === 'ProbeBurned');
  if (burned?.type === 'ProbeBurned') {
    return burned.data.reason === 'agent_missing'
      ? refusal(404, 'ErrAgentNotFound', 'Target agent no longer exists')
      : refusal(422, 'ErrInvalidProbeMessage', `Probe message failed validation: ${burned.data.detail}`);
  }
  if (ruled.state.status === 'absent') throw new Error(`probe ${probe.probeId} has no stream`);
  const creator = ruled.state.by;
  const envelope = probeEnvelope(probe.probeId, now, probe.message, creator);
  const sent = sendSystemDirect(
    app,
    probe.ownerId,
    `agent-${probe.agentId}`,
    envelope,
    { probe_id: probe.probeId, probe_by: creator.key, probe_by_name: creator.name },
    actor,
  );
  app.engine.handle(probeDecider, stream, { type: 'FireProbe', messageId: sent.messageId }, actor);
  return {
    status: 200,
    body: {
      status: 'ok',
      probe_id: probe.probeId,
      agent_id: String(probe.agentId),
      message_id: sent.messageId,
      fired_at: now,
    },
  };
}
