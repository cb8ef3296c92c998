import type { App } from '../../app.js';
import type { CommandOptions } from '../../engine/handle.js';
import { DomainError } from '../../errors.js';
import type { Speaker } from '../../events/principals.js';
import { getResourceRequest } from '../../projections/resources.js';
import { requestOf } from '../resources.js';
import { setSecret } from '../secrets.js';

export interface Fulfilled {
  requestId: number;
  status: string;
  secretId: number;
}

/**
 * The console's answer to one request: the value is sealed into the requester's agent scope — exactly
 * like `colony secrets set NAME VALUE --scope agent:REQUESTER` — which fulfils it (and any other pending
 * request it answers) and DMs the requester, in one command. The resource-request decider refuses a
 * request that is no longer pending (ErrRequestNotPending), and then nothing is set.
 */
export function fulfilRequest(
  app: App,
  by: Speaker,
  requestId: number,
  value: string,
  actor: CommandOptions,
): Fulfilled {
  const result = app.engine.transact(actor, () => {
    const r = requestOf(app, by, requestId);
    return setSecret(app, by, { name: r.name, value, scope: `agent:${r.requesterAgentId}`, answers: requestId }, actor);
  });
  if (!result.value) throw new DomainError('ErrDuplicateCommand', 'this command already ran');
  const status = getResourceRequest(app.engine.db, requestId)!.status;
  return { requestId, status, secretId: result.value.secretId };
}
