import { DomainError } from '../errors.js';
import {
  SESSION_MESSAGE_CAP,
  type RunEvent,
  type RunFinished,
  type RunQueued,
  type RunRefused,
  type RunStarted,
  type RuntimeEvent,
  type RuntimeOverrides,
  type SessionRole,
  type Wake,
} from '../events/runs.js';
import type { SandboxOverrides, SandboxProfile } from '../events/sandbox.js';
import type { Decider } from '../engine/decider.js';

/**
 * A run's life on its `run-<id>` stream: queued (or refused), started once, then timed out and/or
 * finished, or failed. Gates are facts from other streams (the agent, its goal, its other runs): the
 * caller checks them and either queues, starts or refuses (actions/runs.ts); this decider keeps the
 * order of the steps and numbers the transcript.
 */
export type QueueRun = { type: 'QueueRun'; run: RunQueued['data'] };
export type RefuseRun = { type: 'RefuseRun'; refusal: RunRefused['data'] };
export type MergeWake = { type: 'MergeWake'; wake: Wake };
export type StartRun = { type: 'StartRun'; start: RunStarted['data'] };
export type RecordSessionMessage = { type: 'RecordSessionMessage'; role: SessionRole; content: string };
export type TimeOutRun = { type: 'TimeOutRun'; timeoutSec: number };
export type FinishRun = { type: 'FinishRun'; finish: RunFinished['data'] };
export type FailRun = { type: 'FailRun'; reason: string; cancelledBy?: string };
export type LaunchRun = { type: 'LaunchRun'; sandbox: SandboxProfile };
export type RunCommand =
  QueueRun | RefuseRun | MergeWake | StartRun | RecordSessionMessage | TimeOutRun | FinishRun | FailRun | LaunchRun;

export type RunPhase = 'absent' | 'queued' | 'refused' | 'running' | 'finished' | 'failed';
export interface RunState {
  phase: RunPhase;
  runId: number;
  agentId: number;
  sessionId: string;
  seq: number;
  timedOut: boolean;
}

const initial = (): RunState => ({ phase: 'absent', runId: 0, agentId: 0, sessionId: '', seq: 0, timedOut: false });

function evolve(state: RunState, event: RunEvent): RunState {
  switch (event.type) {
    case 'RunQueued':
      return {
        ...state,
        phase: 'queued',
        runId: event.data.runId,
        agentId: event.data.agentId,
        sessionId: event.data.sessionId,
      };
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

function decide(command: RunCommand, state: RunState): RunEvent[] {
  switch (command.type) {
    case 'QueueRun':
      if (state.phase !== 'absent') throw new DomainError('ErrRunExists', `run ${command.run.runId} already exists`);
      return [{ type: 'RunQueued', data: command.run }];
    case 'RefuseRun':
      if (state.phase !== 'absent' && state.phase !== 'queued') throw notIn(state, 'refused');
      return [{ type: 'RunRefused', data: command.refusal }];
    case 'MergeWake':
      if (state.phase !== 'queued') throw notIn(state, 'merged into');
      return [{ type: 'RunWakeMerged', data: { runId: state.runId, wake: command.wake } }];
    case 'StartRun':
      if (state.phase !== 'queued') throw notIn(state, 'started');
      return [{ type: 'RunStarted', data: command.start }];
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
      return [
        {
          type: 'RunFailed',
          data: {
            runId: state.runId,
            agentId: state.agentId,
            reason: command.reason,
            ...(command.cancelledBy === undefined ? {} : { cancelledBy: command.cancelledBy }),
          },
        },
      ];
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
  snapshot: { name: 'run', version: 1 },
  initialState: initial,
  evolve,
  decide,
};

/** An agent's runtime settings and its stopped flag (`runtime-<agentId>`). */
export type ConfigureRuntime = { type: 'ConfigureRuntime'; agentId: number; settings: RuntimeOverrides; by: string };
export type StopAgent = { type: 'StopAgent'; agentId: number; by: string; reason: string };
export type StartAgent = { type: 'StartAgent'; agentId: number; by: string };
export type SetAgentProject = { type: 'SetAgentProject'; agentId: number; projectId: number | null; by: string };
export type ConfigureSandbox = { type: 'ConfigureSandbox'; agentId: number; settings: SandboxOverrides; by: string };
export type RuntimeCommand = ConfigureRuntime | StopAgent | StartAgent | SetAgentProject | ConfigureSandbox;
export interface RuntimeState {
  settings: RuntimeOverrides | null;
  stopped: boolean;
  projectId: number | null;
  sandbox: SandboxOverrides | null;
}

function evolveRuntime(state: RuntimeState, event: RuntimeEvent): RuntimeState {
  switch (event.type) {
    case 'RuntimeConfigured':
      return { ...state, settings: event.data.settings };
    case 'AgentStopped':
      return { ...state, stopped: true };
    case 'AgentStarted':
      return { ...state, stopped: false };
    case 'AgentProjectSet':
      return { ...state, projectId: event.data.projectId };
    case 'SandboxConfigured':
      return { ...state, sandbox: event.data.settings };
    default: {
      const never: never = event;
      return never;
    }
  }
}

function decideRuntime(command: RuntimeCommand, state: RuntimeState): RuntimeEvent[] {
  switch (command.type) {
    case 'ConfigureRuntime': {
      const s = command.settings;
      const same =
        state.settings !== null &&
        (Object.keys(s) as (keyof RuntimeOverrides)[]).every((k) => s[k] === state.settings![k]);
      return same
        ? []
        : [{ type: 'RuntimeConfigured', data: { agentId: command.agentId, settings: s, by: command.by } }];
    }
    case 'StopAgent':
      return state.stopped
        ? []
        : [{ type: 'AgentStopped', data: { agentId: command.agentId, by: command.by, reason: command.reason } }];
    case 'StartAgent':
      return state.stopped ? [{ type: 'AgentStarted', data: { agentId: command.agentId, by: command.by } }] : [];
    case 'SetAgentProject':
      return state.projectId === command.projectId
        ? []
        : [
            {
              type: 'AgentProjectSet',
              data: { agentId: command.agentId, projectId: command.projectId, by: command.by },
            },
          ];
    case 'ConfigureSandbox':
      return JSON.stringify(state.sandbox) === JSON.stringify(command.settings)
        ? []
        : [
            {
              type: 'SandboxConfigured',
              data: { agentId: command.agentId, settings: command.settings, by: command.by },
            },
          ];
    default: {
      const never: never = command;
      return never;
    }
  }
}

export const runtimeDecider: Decider<RuntimeState, RuntimeCommand, RuntimeEvent> = {
  initialState: () => ({ settings: null, stopped: false, projectId: null, sandbox: null }),
  evolve: evolveRuntime,
  decide: decideRuntime,
};
