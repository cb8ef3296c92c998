import type { App } from '../../app.js';
import { detectedKind, type PresentationFacts } from '../../commands/webapp-presentation.js';
import type { WebappKind } from '../../events/webapps.js';
import { type Speaker } from '../../events/principals.js';
import { getAgent, type AgentRow } from '../../projections/principal-queries.js';
import { getProject, type ProjectRow } from '../../projections/projects.js';
import { runtimeOf } from '../../projections/run-queries.js';
import { servedPort } from '../../public-url.js';
import { agentIdOf } from '../goals.js';
import { agentOf } from '../probes.js';
import { sharesHostLoopback } from './loopback.js';
import { inspectStatic } from './targets.js';

/** What webapp_present was asked, as its caller gave it. */
export interface PresentInput {
  target: string;
  title: string;
  description: string;
  kind: string;
  agentId: string;
}

/** The facts for the web app decider, and the rows behind them (the card and the registration need them once accepted). */
export interface Gathered {
  facts: PresentationFacts;
  agent: AgentRow | null;
  project: ProjectRow | null;
  kind: WebappKind | null;
}

/**
 * Reads, never refuses: the agent presenting (the tenant's agent `agent_id` names, else the calling
 * agent), its runtime (whether it shares the host's loopback, loopback.ts) and project, where a static target resolves on disk, and Colony's own port.
 */
export function presentationFacts(app: App, by: Speaker, input: PresentInput): Gathered {
  const db = app.engine.db;
  const own = agentIdOf(by);
  const ref = input.agentId.trim();
  const agent = ref !== '' ? agentOf(app, by.tenant, ref) : own === null ? null : getAgent(db, own);
  const runtime = agent ? runtimeOf(db, agent.agentId) : null;
  const project = runtime === null || runtime.projectId === null ? null : getProject(db, runtime.projectId);
  const target = input.target.trim();
  const kind = detectedKind(target, input.kind);
  const staticFile = kind === 'static' && project && target !== '' ? inspectStatic(target, project) : null;
  const facts: PresentationFacts = {
    target: input.target,
    kind: input.kind,
    agentRef: input.agentId,
    callerAgentId: own,
    presenter: agent &&
      runtime && {
        agentId: agent.agentId,
        name: agent.name,
        stopped: runtime.stopped,
        hostLoopback: sharesHostLoopback(runtime.sandbox),
      },
    project: project && { name: project.name, path: project.path, archived: project.archived },
    staticFile,
    servedPort: servedPort(),
  };
  return { facts, agent, project, kind };
}
