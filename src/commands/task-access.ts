import { isOwner } from '../events/principals.js';
import { DomainError } from '../errors.js';
import type { CancelTask, Live, RecordCost, SetTaskBlockers, Task, TaskCommand } from './task-types.js';

/**
 * Who may move a task, decided from facts about the caller that arrive in the command. Only agents
 * claim, start, complete and release tasks; only the owner of the task's tenant cancels one. A verdict
 * never comes from the agent whose work it judges nor from its spawn lineage: the peer verifier and its
 * lineage may not claim the work, and a peer verdict on work its lineage did is refused (for tasks that
 * were claimed before the claim was checked). Usage is reported by the task's assignee, its goal's
 * coordinator (its own runs are charged to the goal) or the owner: spend pauses goals. A task's blockers
 * are changed by its owner, its creator, its assignee or its goal's coordinator: they gate who may work
 * on it. A quarantined agent claims nothing.
 */
/** Who may issue the command, checked before anything about the task itself. */
export function checkCaller(c: TaskCommand, state: Task): void {
  switch (c.type) {
    case 'ClaimTask': {
      const agent = mustBeAgent(c.agent, 'claim tasks');
      if (state.status !== 'absent') mustBeIndependent(state, c.inVerifierLineage, 'claim');
      if (agent.quarantined)
        throw new DomainError('ErrAgentQuarantined', `agent ${agent.name} is quarantined and may not claim tasks`, {
          agent: agent.name,
        });
      return;
    }
    case 'StartTask':
      mustBeAgent(c.agent, 'start tasks');
      return;
    case 'CompleteTask':
      mustBeAgent(c.agent, 'complete tasks');
      return;
    case 'ReleaseTask':
      mustBeAgent(c.agent, 'release tasks');
      return;
    case 'CancelTask':
      mustBeOwner(c);
      return;
    default:
      return;
  }
}

export function mustBeAgent<A>(agent: A | null, what: string): A {
  if (agent === null) throw new DomainError('ErrForbidden', `only agents ${what}; owners act through their agents`);
  return agent;
}

export function mustBeOwner(c: CancelTask): void {
  if (!isOwner(c.by, c.ownerId)) throw new DomainError('ErrForbidden', 'only the owner cancels tasks');
}

/** `related`: the worker (the claimer, or the assignee when the verdict comes) is the peer verifier or of its lineage. */
export function mustBeIndependent(state: Live, related: boolean, when: 'claim' | 'verify'): void {
  const v = state.verifier;
  if (v.kind !== 'peer' || !related) return;
  const message =
    when === 'claim'
      ? `task ${state.taskId} is verified by agent ${v.agent_id}, which is you or in your spawn lineage: a verdict must come from an agent independent of the work, so you may not claim it`
      : `task ${state.taskId}'s assignee is you or in your spawn lineage: a verdict must come from an agent independent of the work`;
  throw new DomainError('ErrSelfVerification', message, { task_id: state.taskId, verifier_agent_id: v.agent_id });
}

export function mayReport(state: Live, c: RecordCost): void {
  const r = c.reporter;
  // Reported usage without its reporter would skip the rule: a caller's bug, never a pass.
  if (r === null && c.source !== 'run') throw new Error('usage someone reports needs its reporter facts');
  if (r === null || r.agentId === null || r.agentId === state.assignee?.agentId || r.agentId === r.coordinatorAgentId)
    return;
  throw new DomainError(
    'ErrForbidden',
    `only task ${state.taskId}'s assignee, its goal's coordinator or the owner may report usage on it`,
    { task_id: state.taskId },
  );
}

export function mayChangeBlockers(state: Live, c: SetTaskBlockers): void {
  const key = c.by.key;
  if (
    isOwner(c.by, c.ownerId) ||
    key === state.createdBy ||
    (state.assignee !== null && key === `agent-${state.assignee.agentId}`) ||
    (c.coordinatorAgentId !== null && key === `agent-${c.coordinatorAgentId}`)
  )
    return;
  throw new DomainError(
    'ErrForbidden',
    `only task ${state.taskId}'s owner, its creator, its assignee or its goal's coordinator may change its blockers`,
    { task_id: state.taskId },
  );
}
