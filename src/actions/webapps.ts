import { randomBytes } from 'node:crypto';
import type { App } from '../app.js';
import { webappDecider } from '../commands/webapps.js';
import { DomainError, invalidInput } from '../errors.js';
import type { MessagePosted } from '../events/channels.js';
import type { StoredEvent } from '../engine/event.js';
import { appPath, webappStream, type WebappEvent, type WebappKind } from '../events/webapps.js';
import { getGoal } from '../projections/goal-queries.js';
import { getAgent, getUser, type AgentRow } from '../projections/principals.js';
import { getProject, getProjectByName, type ProjectRow } from '../projections/projects.js';
import { runningRunOf, runtimeOf } from '../projections/run-queries.js';
import { getWebapp, listWebapps, livePortAppsOf, webappByKey, type WebappRow } from '../projections/webapps.js';
import { sendDirect, sendToChannel } from './channels.js';
import { agentIdOf } from './goals.js';
import { agentOf } from './probes.js';
import { checkTarget, detectKind } from './webapps/targets.js';
import { type Speaker } from '../events/principals.js';
import { type CommandOptions } from '../engine/handle.js';
import { speakerOf } from './principals.js';

/**
 * Web app commands (xylocopa's webapp_present / webapp_list, reference §1.5), scoped to the caller's
 * tenant. Every check runs in xylocopa's order before anything is written, and a refusal's message is
 * its text. Presenting is one command: the card message and the registration (new, or the same
 * (project, kind, target) re-presented) commit together.
 */
export interface PresentInput {
  target: string;
  title: string;
  description: string;
  kind: string;
  agentId: string;
}
export interface Presented {
  app: WebappRow;
  outcome: 'presented' | 'represented';
  messageId: number;
  channelId: number;
}

export function presentWebapp(app: App, by: Speaker, input: PresentInput, actor: CommandOptions): Presented {
  const raw = input.target.trim();
  if (raw === '') throw invalidInput('Error: target is required.', { field: 'target' });
  const kind = detectKind(raw, input.kind);
  const agent = presenter(app, by, input.agentId);
  const project = projectOfAgent(app, agent);
  const target = checkTarget(kind, raw, project);
  const [title, description] = [input.title.trim(), input.description.trim()];
  const result = app.engine.transact(actor, (uow) => {
    const existing = webappByKey(app.engine.db, { ownerId: agent.ownerId, projectId: project.projectId, kind, target });
    const appId = existing?.appId ?? freshAppId(app);
    const card = {
      appId,
      kind,
      target,
      project: project.name,
      title: title || existing?.title || '',
      description: description || existing?.description || '',
    };
    const { messageId } = postCard(app, agent, card, actor);
    if (existing) {
      app.engine.handle(
        webappDecider,
        webappStream(existing.n),
        { type: 'RepresentWebapp', title, description, agentId: agent.agentId, messageId },
        actor,
      );
    } else {
      const n = uow.ids.next('webapp');
      app.engine.handle(
        webappDecider,
        webappStream(n),
        {
          type: 'PresentWebapp',
          app: {
            appId,
            n,
            ownerId: agent.ownerId,
            projectId: project.projectId,
            kind,
            target,
            title,
            description,
            agentId: agent.agentId,
            messageId,
          },
        },
        actor,
      );
    }
  });
  return outcomeOf(app, result.events);
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

/** agent_id (an id or a name of the tenant's agents) when given — for an agent, only itself — else the calling agent; an owner must name one. */
function presenter(app: App, by: Speaker, ref: string): AgentRow {
  const own = agentIdOf(by);
  if (ref.trim() !== '') {
    const agent = agentOf(app, by.tenant, ref.trim());
    if (!agent) throw new DomainError('ErrNotFound', `Error: agent ${ref} not found.`, { agent_id: ref });
    // Colony knows which agent calls: naming another would post the card under its name and tie the port to its lifetime.
    if (own !== null && agent.agentId !== own)
      throw new DomainError(
        'ErrForbidden',
        'Error: agent_id names another agent — an agent presents web apps as itself.',
        { agent_id: ref },
      );
    return agent;
  }
  const agent = own === null ? null : getAgent(app.engine.db, own);
  if (!agent)
    throw new DomainError(
      'ErrUnknownCaller',
      "Error: could not identify the calling agent (this is an owner token, not an agent's). Pass agent_id explicitly.",
    );
  return agent;
}

/** The project the agent works in (its owner sets it): every web app is registered under one. A stopped agent presents nothing. */
function projectOfAgent(app: App, agent: AgentRow): ProjectRow {
  const runtime = runtimeOf(app.engine.db, agent.agentId);
  const project = runtime.projectId === null ? null : getProject(app.engine.db, runtime.projectId);
  if (runtime.stopped) {
    throw new DomainError(
      'ErrAgentStopped',
      `Error: agent ${agent.name} is stopped — only a running agent presents web apps.`,
      { agent_id: agent.agentId },
    );
  }
  if (!project) {
    throw new DomainError(
      'ErrNoProject',
      `Error: agent ${agent.name} has no project. Its owner assigns one first: colony agents runtime ${agent.name} --project NAME.`,
      { agent_id: agent.agentId },
    );
  }
  if (project.archived)
    throw new DomainError(
      'ErrProjectArchived',
      `Error: project ${project.name} is archived — project_create re-activates it.`,
      { project: project.name },
    );
  return project;
}

function freshAppId(app: App): string {
  for (;;) {
    const id = randomBytes(16).toString('hex');
    if (!getWebapp(app.engine.db, id)) return id;
  }
}

interface Card {
  appId: string;
  kind: WebappKind;
  target: string;
  project: string;
  title: string;
  description: string;
}

/** Where a static or port app opens (`/apps/<id>/`, served by Colony), or the external link itself. */
export const webappUrl = (w: { appId: string; kind: WebappKind; target: string }): string =>
  w.kind === 'url' ? w.target : appPath(w.appId);

export const cardLabel = (w: { kind: WebappKind; target: string; title: string }): string =>
  w.title || (w.kind === 'port' ? `localhost:${w.target}` : w.target);

/** The card, posted by the presenting agent: to the channel of the goal its current run works on, else to its owner. */
function postCard(app: App, agent: AgentRow, c: Card, actor: CommandOptions): { messageId: number; channelId: number } {
  const speaker = speakerOf(app, `agent-${agent.agentId}`);
  const webapp = {
    app_id: c.appId,
    kind: c.kind,
    target: c.target,
    project: c.project,
    title: c.title,
    description: c.description,
    url: webappUrl(c),
  };
  const message = {
    body: `🖥️ Web app: ${cardLabel(c)}`,
    subject: null,
    priority: 5,
    metadata: { kind: 'webapp', webapp },
    replyTo: null,
  };
  const run = runningRunOf(app.engine.db, agent.agentId);
  const goal = run?.goalId ? getGoal(app.engine.db, run.goalId) : null;
  if (goal) return sendToChannel(app, speaker, { id: goal.channelId }, message, actor);
  return sendDirect(app, speaker, getUser(app.engine.db, agent.ownerId)!.name, message, actor);
}

/**
 * webapp_list's scope: the named project (an unknown name simply has none), else the calling agent's
 * project, else every project of the tenant (`project: null`).
 */
export function tenantWebapps(app: App, by: Speaker, name: string): { project: string | null; apps: WebappRow[] } {
  const db = app.engine.db;
  let project: ProjectRow | null = null;
  if (name.trim() !== '') {
    project = getProjectByName(db, by.tenant, name.trim());
    if (!project) return { project: name.trim(), apps: [] };
  } else {
    const own = agentIdOf(by);
    const projectId = own === null ? null : runtimeOf(db, own).projectId;
    project = projectId === null ? null : getProject(db, projectId);
  }
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
