import { DomainError } from '../errors.js';
import {
  SESSION_MESSAGE_CAP,
  type RunEvent,
  type RunFinished,
  type RunQueued,
  type RunStarted,
  type SessionRole,
  type Wake,
} from '../events/runs.js';
import type { SandboxProfile } from '../events/sandbox.js';
import type { Decider, DecideContext } from '../engine/decider.js';
import { gateRefusal, noBackend, waitReason, type GateFacts, type RunAgentFacts, type WaitFacts } from './run-gates.js';

export { runtimeDecider } from './runtime.js';

/**
 * A run's life on its `run-<id>` stream: queued (or refused by a gate), started once, then timed out
 * and/or finished, or failed. A new wake-up is checked against the gates (run-gates.ts) and queued with
 * the reason it must wait, if any; a queued run starts when its agent is free and out of its cooldown,
 * after the gates are checked again (the world may have changed while it waited). The gates' facts — the
 * agent, its goal, its other runs — arrive in the command. The decider also numbers the transcript.
 */
export type QueueRun = {
  type: 'QueueRun';
  run: Omit<RunQueued['data'], 'reason' | 'notBefore'>;
  gates: GateFacts;
  wait: WaitFacts;
};
/** A wake-up merged into the run that waits for the same agent and task (coalescing). */
export type MergeWake = { type: 'MergeWake'; wake: Wake; agent: RunAgentFacts };
/** `agent`: the gates and the start as it would be recorded; null when the run's agent no longer exists. */
export type StartRun = {
  type: 'StartRun';
  wait: WaitFacts;
  agent: { gates: GateFacts; start: RunStarted['data'] } | null;
};
export type RecordSessionMessage = { type: 'RecordSessionMessage'; role: SessionRole; content: string };
export type TimeOutRun = { type: 'TimeOutRun'; timeoutSec: number };
export type FinishRun = { type: 'FinishRun'; finish: RunFinished['data'] };
export type FailRun = { type: 'FailRun'; reason: string; cancelledBy?: string; cause?: string };
export type LaunchRun = { type: 'LaunchRun'; sandbox: SandboxProfile };
export type RunCommand =
  QueueRun | MergeWake | StartRun | RecordSessionMessage | TimeOutRun | FinishRun | FailRun | LaunchRun;

export type RunPhase = 'absent' | 'queued' | 'refused' | 'running' | 'finished' | 'failed';
export interface RunState {
  phase: RunPhase;
  runId: number;
  agentId: number;
  sessionId: string;
  seq: number;
  timedOut: boolean;
  /** As queued: what a refusal at start records, and the time the run may not start before. */
  queued: Pick<RunQueued['data'], 'ownerId' | 'taskId' | 'goalId' | 'depth' | 'wake' | 'notBefore'> | null;
}

const initial = (): RunState => ({
  phase: 'absent',
  runId: 0,
  agentId: 0,
  sessionId: '',
  seq: 0,
  timedOut: false,
  queued: null,
});

function evolve(state: RunState, event: RunEvent): RunState {
  switch (event.type) {
    case 'RunQueued': {
      const d = event.data;
      return {
        ...state,
        phase: 'queued',
        runId: d.runId,
        agentId: d.agentId,
        sessionId: d.sessionId,
        queued: {
          ownerId: d.ownerId,
          taskId: d.taskId,
          goalId: d.goalId,
          depth: d.depth,
          wake: d.wake,
          notBefore: d.notBefore,
        },
      };
    }
    case 'RunRefused':
      return { ...state, phase: 'refused', runId: event.data.runId, agentId: event.data.agentId };
    case 'RunWakeMerged':
    case 'RunLaunched':
      return state;
    case 'RunStarted':
      return { ...state, phase: 'running' };
    case 'SessionMessageRecorded':
      return { ...state, seq: event.data.seq };
    case 'RunTimedOut':
      return { ...state, timedOut: true };
    case 'RunFinished':
      return { ...state, phase: 'finished' };
    case 'RunFailed':
      return { ...state, phase: 'failed' };
    default: {
      const never: never = event;
      return never;
    }
  }
}

/** A new wake-up: refused by the first gate that says no, else queued with the reason it must wait (if any). */
function queue(state: RunState, c: QueueRun, now: string): RunEvent[] {
  if (state.phase !== 'absent') throw new DomainError('ErrRunExists', `run ${c.run.runId} already exists`);
  if (!c.gates.agent.hasBackend) throw noBackend(c.gates.agent);
  const r = c.run;
  const refusal = gateRefusal(c.gates, r.depth, false);
  if (refusal) {
    const { runId, agentId, ownerId, taskId, goalId, wake, depth } = r;
    return [{ type: 'RunRefused', data: { runId, agentId, ownerId, taskId, goalId, wake, depth, ...refusal } }];
  }
  const wait = waitReason(c.wait, now, r.wake.source === 'execute_agent', null);
  return [{ type: 'RunQueued', data: { ...r, reason: wait?.reason ?? null, notBefore: wait?.notBefore ?? null } }];
}

/** Nothing while the run must still wait; failed if its agent is gone; refused if a gate now says no; else started. */
function start(state: RunState, c: StartRun, now: string): RunEvent[] {
  if (state.phase !== 'queued' || !state.queued) throw notIn(state, 'started');
  const q = state.queued;
  if (waitReason(c.wait, now, q.wake.source === 'execute_agent', q.notBefore)) return [];
  if (!c.agent) return [failed(state, `agent ${state.agentId} no longer exists`)];
  const refusal = gateRefusal(c.agent.gates, q.depth, true);
  if (!refusal) return [{ type: 'RunStarted', data: c.agent.start }];
  const { ownerId, taskId, goalId, wake, depth } = q;
  return [
    {
      type: 'RunRefused',
      data: { runId: state.runId, agentId: state.agentId, ownerId, taskId, goalId, wake, depth, ...refusal },
    },
  ];
}

const failed = (state: RunState, reason: string, cancelledBy?: string, cause?: string): RunEvent => ({
  type: 'RunFailed',
  data: {
    runId: state.runId,
    agentId: state.agentId,
    reason,
    ...(cancelledBy === undefined ? {} : { cancelledBy }),
    ...(cause === undefined ? {} : { cause }),
  },
});

function decide(command: RunCommand, state: RunState, ctx: DecideContext): RunEvent[] {
  switch (command.type) {
    case 'QueueRun':
      return queue(state, command, ctx.now);
    case 'MergeWake':
      if (!command.agent.hasBackend) throw noBackend(command.agent);
      if (state.phase !== 'queued') throw notIn(state, 'merged into');
      return [{ type: 'RunWakeMerged', data: { runId: state.runId, wake: command.wake } }];
    case 'StartRun':
      return start(state, command, ctx.now);
    case 'RecordSessionMessage':
      if (state.phase === 'absent' || state.phase === 'refused') throw notIn(state, 'given a transcript');
      return [
        {
          type: 'SessionMessageRecorded',
          data: {
            runId: state.runId,
            sessionId: state.sessionId,
            seq: state.seq + 1,
            role: command.role,
            ...capped(command.content),
          },
        },
      ];
    case 'TimeOutRun':
      if (state.phase !== 'running' || state.timedOut) return [];
      return [
        { type: 'RunTimedOut', data: { runId: state.runId, agentId: state.agentId, timeoutSec: command.timeoutSec } },
      ];
    case 'FinishRun':
      if (state.phase !== 'running') throw notIn(state, 'finished');
      return [{ type: 'RunFinished', data: command.finish }];
    case 'LaunchRun':
      if (state.phase !== 'running') throw notIn(state, 'launched');
      return [{ type: 'RunLaunched', data: { runId: state.runId, agentId: state.agentId, sandbox: command.sandbox } }];
    case 'FailRun':
      if (state.phase !== 'running' && state.phase !== 'queued') return [];
      return [failed(state, command.reason, command.cancelledBy, command.cause)];
    default: {
      const never: never = command;
      return never;
    }
  }
}

const notIn = (state: RunState, what: string): DomainError =>
  new DomainError('ErrRunState', `run ${state.runId || '(new)'} is ${state.phase} and cannot be ${what}`, {
    run_id: state.runId,
    phase: state.phase,
  });

/** A transcript message over 64 KiB keeps its first 64 KiB (on a character boundary) and says how much was cut. */
export function capped(content: string): { content: string; truncated: boolean; bytes: number } {
  const bytes = Buffer.byteLength(content, 'utf8');
  if (bytes <= SESSION_MESSAGE_CAP) return { content, truncated: false, bytes };
  const cut = Buffer.from(content, 'utf8')
    .subarray(0, SESSION_MESSAGE_CAP)
    .toString('utf8')
    .replace(/\uFFFD$/, '');
  return {
    content: `${cut}\n… [truncated: ${bytes - Buffer.byteLength(cut, 'utf8')} of ${bytes} bytes omitted]`,
    truncated: true,
    bytes,
  };
}

export const runDecider: Decider<RunState, RunCommand, RunEvent> = {
  // Version 2: the state keeps what the run was queued with (a refusal at start records it).
  snapshot: { name: 'run', version: 2 },
  initialState: initial,
  evolve,
  decide,
};
