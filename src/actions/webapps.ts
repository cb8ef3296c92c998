import { randomBytes } from 'node:crypto';
import type { App } from '../app.js';
import { storedTarget, type PresentationFacts } from '../commands/webapp-presentation.js';
import { webappDecider } from '../commands/webapps.js';
import { DomainError } from '../errors.js';
import type { MessagePosted } from '../events/channels.js';
import type { StoredEvent } from '../engine/event.js';
import { webappStream, type WebappEvent, type WebappKind } from '../events/webapps.js';
import type { AgentRow } from '../projections/principal-queries.js';
import { getProject, getProjectByName, type ProjectRow } from '../projections/projects.js';
import { runtimeOf } from '../projections/run-queries.js';
import { getWebapp, listWebapps, livePortAppsOf, webappByKey, type WebappRow } from '../projections/webapps.js';
import { agentIdOf } from './goals.js';
import { postCard } from './webapps/card.js';
import { presentationFacts, type PresentInput } from './webapps/facts.js';
import { type Speaker } from '../events/principals.js';
import { type CommandOptions } from '../engine/handle.js';

export { cardLabel, webappUrl } from './webapps/card.js';
export type { PresentInput } from './webapps/facts.js';

/**
 * Web app commands (xylocopa's webapp_present / webapp_list), scoped to the caller's tenant. Presenting
 * is one transaction: the action reads the facts, the web app decider checks them in xylocopa's order
 * (with its texts) before anything is written, then the card message and the registration (new, or the
 * same (project, kind, target) re-presented) commit together.
 */
export interface Presented {
  app: WebappRow;
  outcome: 'presented' | 'represented';
  messageId: number;
  channelId: number;
}

export function presentWebapp(app: App, by: Speaker, input: PresentInput, actor: CommandOptions): Presented {
  const result = app.engine.transact(actor, (uow) => {
    const { facts, agent, project, kind } = presentationFacts(app, by, input);
    const target = kind === null ? null : storedTarget(kind, input.target.trim(), facts.staticFile);
    const key = agent && project && kind && target !== null;
    const existing = key
      ? webappByKey(app.engine.db, { ownerId: agent.ownerId, projectId: project.projectId, kind, target })
      : null;
    const n = existing?.n ?? uow.ids.next('webapp');
    // The registration names the card's message, so the card comes first; the decider rules before either.
    app.engine.handle(webappDecider, webappStream(n), { type: 'CheckPresentation', facts }, actor);
    if (!agent || !project || !kind || target === null)
      throw new DomainError('ErrInternal', 'an accepted presentation has a presenter, a project and a kind');
    record(app, { agent, project, kind, target, existing, n, facts }, input, actor);
  });
  return outcomeOf(app, result.events);
}

interface Accepted {
  agent: AgentRow;
  project: ProjectRow;
  kind: WebappKind;
  target: string;
  existing: WebappRow | null;
  n: number;
  facts: PresentationFacts;
}

/** Posts the card, then records it: a new registration, or the existing one presented again. */
function record(app: App, a: Accepted, input: PresentInput, actor: CommandOptions): void {
  const [title, description] = [input.title.trim(), input.description.trim()];
  const appId = a.existing?.appId ?? freshAppId(app);
  const card = {
    appId,
    kind: a.kind,
    target: a.target,
    project: a.project.name,
    title: title || a.existing?.title || '',
    description: description || a.existing?.description || '',
    presentedBy: a.facts.callerAgentId === null ? ('owner' as const) : ('agent' as const),
  };
  const { messageId } = postCard(app, a.agent, card, actor);
  const agentId = a.agent.agentId;
  if (a.existing) {
    const again = { type: 'RepresentWebapp' as const, title, description, agentId, messageId, facts: a.facts };
    app.engine.handle(webappDecider, webappStream(a.n), again, actor);
    return;
  }
  const registration = {
    appId,
    n: a.n,
    ownerId: a.agent.ownerId,
    projectId: a.project.projectId,
    kind: a.kind,
    target: a.target,
    title,
    description,
    agentId,
    messageId,
  };
  app.engine.handle(
    webappDecider,
    webappStream(a.n),
    { type: 'PresentWebapp', app: registration, facts: a.facts },
    actor,
  );
}

/** What the command appended (also for a retried idempotency key, whose events are the first run's). */
function outcomeOf(app: App, events: readonly StoredEvent[]): Presented {
  const registered = events.find((e) => e.type === 'WebappPresented' || e.type === 'WebappRepresented') as
    StoredEvent<WebappEvent> | undefined;
  const posted = events.find((e): e is StoredEvent<MessagePosted> => e.type === 'MessagePosted');
  if (!registered || !posted || registered.type === 'WebappRetired')
    throw new DomainError('ErrInternal', 'the web app command appended no registration');
  return {
    app: getWebapp(app.engine.db, registered.data.appId)!,
    outcome: registered.type === 'WebappPresented' ? 'presented' : 'represented',
    messageId: posted.data.messageId,
    channelId: posted.data.channelId,
  };
}

function freshAppId(app: App): string {
  for (;;) {
    const id = randomBytes(16).toString('hex');
    if (!getWebapp(app.engine.db, id)) return id;
  }
}

/**
 * webapp_list's scope: the named project (an unknown name simply has none), else the calling agent's
 * project, else every project of the tenant (`project: null`).
 */
export function tenantWebapps(app: App, by: Speaker, name: string): { project: string | null; apps: WebappRow[] } {
  const db = app.engine.db;
  if (name.trim() !== '') {
    const named = getProjectByName(db, by.tenant, name.trim());
    return named
      ? { project: named.name, apps: listWebapps(db, by.tenant, named.projectId) }
      : { project: name.trim(), apps: [] };
  }
  const own = agentIdOf(by);
  const projectId = own === null ? null : runtimeOf(db, own).projectId;
  const project = projectId === null ? null : getProject(db, projectId);
  return { project: project?.name ?? null, apps: listWebapps(db, by.tenant, project?.projectId ?? null) };
}

/** Retires the live port apps the agent presented last (it was stopped), inside the caller's command. */
export function retireAgentWebapps(app: App, agentId: number, actor: CommandOptions): number {
  return (
    app.engine.transact(actor, () => {
      const apps = livePortAppsOf(app.engine.db, agentId);
      for (const w of apps)
        app.engine.handle(webappDecider, webappStream(w.n), { type: 'RetireWebapp', reason: 'agent_stopped' }, actor);
      return apps.length;
    }).value ?? 0
  );
}
