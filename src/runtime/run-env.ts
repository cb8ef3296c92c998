import { randomBytes } from 'node:crypto';
import { buildSecretEnv } from '../actions/secrets/env.js';
import type { App } from '../app.js';
import { log } from '../log.js';
import { unseal } from '../masterkey.js';
import { getGoal } from '../projections/goal-queries.js';
import { getTask } from '../projections/task-queries.js';
import { sealedTokenOf, type AgentRow } from '../projections/principal-queries.js';
import type { RunRow } from '../projections/run-queries.js';

/**
 * What a run's process is given: the agent's own token (unsealed), the secrets in its scope, and
 * Colony's variables (runner.ts says which).
 */
export function agentToken(app: App, agent: AgentRow): string | null {
  const sealed = sealedTokenOf(app.engine.db, agent.agentId);
  return sealed ? unseal(app.key, sealed) : null;
}

export function secretsFor(app: App, run: RunRow, agent: AgentRow): Record<string, string> {
  try {
    return buildSecretEnv(app, {
      ownerId: agent.ownerId,
      agentId: agent.agentId,
      taskId: run.taskId,
      purpose: 'agent_run',
    });
  } catch (err) {
    log.warn({ reason: (err as Error).message, runId: run.runId }, 'secrets were not injected into the run');
    return {};
  }
}

export function colonyEnv(app: App, run: RunRow, agent: AgentRow, token: string, mcpUrl: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    LANG: process.env.LANG ?? 'C.UTF-8',
    COLONY_URL: mcpUrl,
    COLONY_TOKEN: token,
    COLONY_AGENT: agent.name,
    COLONY_AGENT_ID: String(agent.agentId),
    COLONY_RUN_ID: String(run.runId),
    COLONY_SESSION_ID: run.sessionId ?? '',
    COLONY_WAKE_SOURCE: run.wakes[0]?.source ?? 'manual',
    COLONY_TRIGGER_DEPTH: String(run.depth),
    TRACEPARENT: `00-${run.traceId ?? randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`,
  };
  if (run.goalId !== null) {
    env.COLONY_GOAL_ID = String(run.goalId);
    env.COLONY_GOAL_TITLE = getGoal(app.engine.db, run.goalId)?.title ?? '';
  }
  const task = run.taskId === null ? null : getTask(app.engine.db, run.taskId);
  if (task) {
    Object.assign(env, {
      COLONY_TASK_ID: String(task.taskId),
      COLONY_TASK_TITLE: task.title,
      COLONY_TASK_DESCRIPTION: task.description,
      COLONY_TASK_ACCEPTANCE_CRITERIA: task.acceptanceCriteria,
      COLONY_TASK_ANCESTRY: JSON.stringify(task.ancestry),
      COLONY_TASK_BILLING_CODE: task.billingCode,
      // A project task's plan (task_create's model and effort), only when it names one: a backend picks its model from it.
      ...(task.model ? { COLONY_TASK_MODEL: task.model } : {}),
      ...(task.effort ? { COLONY_TASK_EFFORT: task.effort } : {}),
    });
  }
  return env;
}
