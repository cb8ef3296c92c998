import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runDecider, runtimeDecider, type RunCommand } from '../../src/commands/runs.js';
import type { GateFacts, WaitFacts } from '../../src/commands/run-gates.js';
import type { RunEvent, RunQueued, RunStarted, Wake } from '../../src/events/runs.js';
import type { RuntimeCommand } from '../../src/commands/runtime.js';
import { NO_SANDBOX_OVERRIDES } from '../../src/events/sandbox.js';
import { spec } from '../helpers/decider-spec.js';

/**
 * The run decider, given/when/then: a wake-up is refused by the first gate that says no, in order, or
 * queued with the reason it must wait; a queued run starts once its agent is free and out of its
 * cooldown and every gate still passes. And the runtime decider: the settings an owner may give an agent.
 */
const T0 = '2026-01-01T12:00:00.000Z';
const wake: Wake = { source: 'manual', messageIds: [], prompt: null, by: 'user-1' };
const run = { runId: 9, agentId: 3, ownerId: 1, sessionId: 'abc', taskId: 7, goalId: 2, depth: 0, wake };

const gates = (over: Partial<GateFacts> = {}, agent: Partial<GateFacts['agent']> = {}): GateFacts => ({
  agent: {
    agentId: 3,
    name: 'worker',
    hasBackend: true,
    stopped: false,
    quarantined: false,
    quarantineReason: null,
    ...agent,
  },
  task: { taskId: 7, status: 'claimed', reserved: { tokens: 0, cents: 0 } },
  goal: {
    goalId: 2,
    status: 'active',
    pausedReason: null,
    budget: [{ scope: 'goal', taskId: 7, budget: { tokens: null, cents: 100 }, committed: { tokens: 0, cents: 10 } }],
  },
  maxTriggerDepth: 5,
  dailyRunBudget: 100,
  ranToday: 0,
  dailyTokenBudget: 1000,
  tokensToday: 0,
  ...over,
});
const free: WaitFacts = { running: false, lastStart: null, cooldownSec: 5 };
const queue = (g: GateFacts = gates(), wait: WaitFacts = free, over: Partial<typeof run> = {}): RunCommand => ({
  type: 'QueueRun',
  run: { ...run, ...over },
  gates: g,
  wait,
});
const queued = (reason: RunQueued['data']['reason'] = null, notBefore: string | null = null): RunQueued => ({
  type: 'RunQueued',
  data: { ...run, reason, notBefore },
});
const refused = (gate: string, reason: string, depth = 0): RunEvent => ({
  type: 'RunRefused',
  data: { runId: 9, agentId: 3, ownerId: 1, taskId: 7, goalId: 2, wake, depth, gate, reason } as never,
});
const startData: RunStarted['data'] = {
  runId: 9,
  agentId: 3,
  configHash: 'h',
  reservation: { tokens: 0, cents: 0 },
  traceId: 't',
  timeoutSec: 900,
};
const start = (g: GateFacts | null = gates(), wait: WaitFacts = free): RunCommand => ({
  type: 'StartRun',
  wait,
  agent: g && { gates: g, start: startData },
});

describe('run decider: a wake-up meets the gates, in order', () => {
  it('queues a wake-up that passes them', () => {
    spec(runDecider).given([]).when(queue(), { now: T0 }).then([queued()]);
  });

  it('refuses an agent without a backend command outright (ErrNoBackend, nothing written)', () => {
    const e = spec(runDecider)
      .given([])
      .when(queue(gates({}, { hasBackend: false, stopped: true })))
      .thenThrows('ErrNoBackend', 'has no backend command');
    assert.deepEqual(e.details, { agent_id: 3 });
    spec(runDecider)
      .given([queued()])
      .when({ type: 'MergeWake', wake, agent: gates({}, { hasBackend: false }).agent })
      .thenThrows('ErrNoBackend');
  });

  it('stopped, quarantine, task closed, budget, goal closed, trigger depth, daily run budget — the first one refuses', () => {
    const spent = [
      { scope: 'goal' as const, taskId: 7, budget: { tokens: null, cents: 100 }, committed: { tokens: 0, cents: 100 } },
    ];
    const cases: [GateFacts, number, string, RegExp][] = [
      [
        gates({ ranToday: 100 }, { stopped: true, quarantined: true }),
        0,
        'stopped',
        /is stopped; the owner starts it again/,
      ],
      [
        gates({}, { quarantined: true, quarantineReason: 'low score' }),
        9,
        'quarantine',
        /^agent quarantined: low score$/,
      ],
      [
        gates({ task: { taskId: 7, status: 'done', reserved: { tokens: 0, cents: 0 } } }),
        9,
        'task_closed',
        /task 7 is done/,
      ],
      [
        gates({ goal: { goalId: 2, status: 'paused', pausedReason: 'budget', budget: [] } }),
        9,
        'budget',
        /^goal 2 is paused \(budget\)$/,
      ],
      [
        gates({ goal: { goalId: 2, status: 'active', pausedReason: null, budget: spent } }),
        9,
        'budget',
        /^goal 2 cents budget spent: 100 of 100$/,
      ],
      [
        gates({ goal: { goalId: 2, status: 'completed', pausedReason: null, budget: spent } }),
        9,
        'goal_closed',
        /^goal 2 is completed$/,
      ],
      [gates({ ranToday: 100 }), 5, 'trigger_depth', /trigger depth 5 reached the agent's maximum of 5/],
      [gates({ ranToday: 100 }), 4, 'daily_run_budget', /already ran 100 times today \(daily run budget 100\)/],
      [
        gates({ tokensToday: 1000 }),
        4,
        'daily_token_budget',
        /used 1000 tokens today \(daily token budget 1000\); it runs again after midnight UTC/,
      ],
    ];
    for (const [g, depth, gate, reason] of cases) {
      const [event] = runDecider.decide(queue(g, free, { depth }), runDecider.initialState(), {
        now: T0,
        actor: 't',
        ids: { next: () => 1 },
      });
      assert.equal(event?.type, 'RunRefused', gate);
      const d = event!.data as { gate: string; reason: string; depth: number };
      assert.equal(d.gate, gate);
      assert.match(d.reason, reason);
      assert.equal(d.depth, depth);
    }
  });

  it("a task's budget refuses too; the task's own open reservation is not counted", () => {
    const line = {
      scope: 'task' as const,
      taskId: 5,
      budget: { tokens: 50, cents: null },
      committed: { tokens: 60, cents: 0 },
    };
    const g = (reserved: number) =>
      gates({
        task: { taskId: 7, status: 'claimed', reserved: { tokens: reserved, cents: 0 } },
        goal: { goalId: 2, status: 'active', pausedReason: null, budget: [line] },
      });
    spec(runDecider)
      .given([])
      .when(queue(g(0)))
      .then([refused('budget', 'task 5 tokens budget spent: 60 of 50')]);
    spec(runDecider)
      .given([])
      .when(queue(g(20)), { now: T0 })
      .then([queued()]);
  });

  it('a run that passed waits while its agent runs, or for its cooldown; execute_agent skips the cooldown', () => {
    const lastStart = '2026-01-01T11:59:58.000Z';
    spec(runDecider)
      .given([])
      .when(queue(gates(), { ...free, running: true }), { now: T0 })
      .then([queued('agent_running')]);
    spec(runDecider)
      .given([])
      .when(queue(gates(), { ...free, lastStart }), { now: T0 })
      .then([queued('cooldown', '2026-01-01T12:00:03.000Z')]);
    const exec = { ...wake, source: 'execute_agent' as const };
    spec(runDecider)
      .given([])
      .when(queue(gates(), { ...free, lastStart }, { wake: exec }), { now: T0 })
      .then([{ type: 'RunQueued', data: { ...run, wake: exec, reason: null, notBefore: null } }]);
  });
});

describe('run decider: a queued run starts', () => {
  it('starts when its agent is free and every gate passes', () => {
    spec(runDecider)
      .given([queued()])
      .when(start(), { now: T0 })
      .then([{ type: 'RunStarted', data: startData }]);
  });

  it('does nothing while it must wait: its agent runs, or its cooldown has not passed', () => {
    spec(runDecider)
      .given([queued()])
      .when(start(gates(), { ...free, running: true }))
      .thenNothingHappened();
    spec(runDecider)
      .given([queued('cooldown', '2026-01-01T12:00:03.000Z')])
      .when(start(null), { now: T0 })
      .thenNothingHappened();
  });

  it('fails when its agent no longer exists', () => {
    spec(runDecider)
      .given([queued()])
      .when(start(null), { now: T0 })
      .then([{ type: 'RunFailed', data: { runId: 9, agentId: 3, reason: 'agent 3 no longer exists' } }]);
  });

  it('is refused when a gate now says no — with what it was queued with; depth and the daily budget were checked then', () => {
    spec(runDecider)
      .given([queued()])
      .when(start(gates({}, { stopped: true })), { now: T0 })
      .then([refused('stopped', 'agent worker is stopped; the owner starts it again with colony agents start worker')]);
    spec(runDecider)
      .given([queued()])
      .when(start(gates({}, { hasBackend: false })), { now: T0 })
      .then([
        refused(
          'no_backend',
          'agent worker has no backend command, so Colony cannot run it (colony agents update worker --command …)',
        ),
      ]);
    spec(runDecider)
      .given([queued()])
      .when(start(gates({ maxTriggerDepth: 0 })), { now: T0 })
      .then([{ type: 'RunStarted', data: startData }]);
  });

  it('a run that is not queued cannot be started', () => {
    spec(runDecider).given([]).when(start()).thenThrows('ErrRunState');
  });
});

describe('runtime decider: the owner’s settings for an agent', () => {
  const configure = (changes: Record<string, number | null>): RuntimeCommand => ({
    type: 'ConfigureRuntime',
    agentId: 3,
    changes,
    by: 'user-1',
  });
  const configured = (settings: Record<string, number | null>) => ({
    type: 'RuntimeConfigured' as const,
    data: {
      agentId: 3,
      settings: {
        timeoutSec: null,
        cooldownSec: null,
        dailyRunBudget: null,
        maxTriggerDepth: null,
        dailyTokenBudget: null,
        ...settings,
      },
      by: 'user-1',
    },
  });

  it('changes only the settings named; null goes back to the default; the same settings write nothing', () => {
    spec(runtimeDecider)
      .given([])
      .when(configure({ timeoutSec: 60 }))
      .then([configured({ timeoutSec: 60 })]);
    spec(runtimeDecider)
      .given([configured({ timeoutSec: 60 })])
      .when(configure({ cooldownSec: 0 }))
      .then([configured({ timeoutSec: 60, cooldownSec: 0 })]);
    spec(runtimeDecider)
      .given([configured({ timeoutSec: 60 })])
      .when(configure({ timeoutSec: null }))
      .then([configured({})]);
    spec(runtimeDecider)
      .given([configured({ timeoutSec: 60 })])
      .when(configure({ timeoutSec: 60 }))
      .thenNothingHappened();
  });

  it('a timeout is a whole number of seconds ≥ 1; the others ≥ 0', () => {
    const bads: Record<string, number>[] = [
      { timeoutSec: 0 },
      { cooldownSec: -1 },
      { dailyRunBudget: 1.5 },
      { maxTriggerDepth: -2 },
    ];
    for (const bad of bads) {
      const e = spec(runtimeDecider).given([]).when(configure(bad)).thenThrows('ErrInvalidInput', 'must be an integer');
      assert.deepEqual(e.details, { field: Object.keys(bad)[0] });
    }
  });

  it('confinement: sandbox on | off, a network mode, a valid allow-list and limits ≥ 1', () => {
    const sandbox = (changes: Record<string, unknown>): RuntimeCommand => ({
      type: 'ConfigureSandbox',
      agentId: 3,
      changes,
      by: 'user-1',
    });
    spec(runtimeDecider)
      .given([])
      .when(sandbox({ network: 'allow', allowHosts: [' API.example.com ', 'api.example.com'] }))
      .then([
        {
          type: 'SandboxConfigured',
          data: {
            agentId: 3,
            settings: { ...NO_SANDBOX_OVERRIDES, network: 'allow', allowHosts: ['api.example.com'] },
            by: 'user-1',
          },
        },
      ]);
    for (const [bad, field] of [
      [{ sandbox: 'maybe' }, 'sandbox'],
      [{ network: 'lan' }, 'network'],
      [{ allowHosts: ['not a host'] }, 'allow-hosts'],
      [{ memoryMb: 0 }, 'memoryMb'],
    ] as const) {
      const e = spec(runtimeDecider).given([]).when(sandbox(bad)).thenThrows('ErrInvalidInput');
      assert.deepEqual(e.details, { field });
    }
  });
});
