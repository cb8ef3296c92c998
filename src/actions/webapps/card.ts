import type { App } from '../../app.js';
import { appPath, type WebappKind } from '../../events/webapps.js';
import { getGoal } from '../../projections/goal-queries.js';
import { getUser, type AgentRow } from '../../projections/principal-queries.js';
import { runningRunOf } from '../../projections/run-queries.js';
import { type CommandOptions } from '../../engine/handle.js';
import { sendDirect, sendToChannel } from '../channels.js';
import { speakerOf } from '../principals.js';

/** The card message a web app is presented with: what it shows, and where it is posted. */
export interface Card {
  appId: string;
  kind: WebappKind;
  target: string;
  project: string;
  title: string;
  description: string;
  /** Who presented it this time: the owner (for `agent_id`), or the agent itself. A port app's proxy reads it back (loopback.ts). */
  presentedBy: 'owner' | 'agent';
}

/** Where a static or port app opens (`/apps/<id>/`, served by Colony), or the external link itself. */
export const webappUrl = (w: { appId: string; kind: WebappKind; target: string }): string =>
  w.kind === 'url' ? w.target : appPath(w.appId);

export const cardLabel = (w: { kind: WebappKind; target: string; title: string }): string =>
  w.title || (w.kind === 'port' ? `localhost:${w.target}` : w.target);

/** The card, posted by the presenting agent: to the channel of the goal its current run works on, else to its owner. */
export function postCard(
  app: App,
  agent: AgentRow,
  c: Card,
  actor: CommandOptions,
): { messageId: number; channelId: number } {
  const speaker = speakerOf(app, `agent-${agent.agentId}`);
  const webapp = {
    app_id: c.appId,
    kind: c.kind,
    target: c.target,
    project: c.project,
    title: c.title,
    description: c.description,
    url: webappUrl(c),
    presented_by: c.presentedBy,
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
