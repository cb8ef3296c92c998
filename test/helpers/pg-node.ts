import { TenantLeadership } from '../../src/engine/pg/leadership.js';
import { PgEventStore } from '../../src/engine/pg/store.js';
import { PgTail } from '../../src/engine/pg/tail.js';
import { createInterface } from 'node:readline';
import { reportUsageUnit } from '../../src/actions/tasks.js';
import { claimedBy, claimTaskUnit } from '../../src/actions/tasks/claim.js';
import { productProjections } from '../../src/app.js';
import { TenantJobs } from '../../src/runtime/tenant-jobs.js';
import { isDomainError } from '../../src/errors.js';
import { agentOf, ownerOf, type RaceTeam } from './race-team.js';

/**
 * One Colony "node" on a shared PostgreSQL store, for the multi-node tests (test/engine/pg/nodes.test.ts).
 *
 *   lead <url> <node> <tenant,tenant,…> <runMs>
 *     Competes for each tenant's jobs (pg/leadership.ts) and prints `gain <tenant>` / `lose <tenant>`.
 *     As leader it runs the test domain's reactor: a `RunQueued` on stream run-N is started at most once
 *     (`RunStarted` appended with expected version 1, printed `started <tenant> run-N`), runs for runMs and
 *     ends with `RunFinished`. On gaining a tenant it first marks every run some other node started and
 *     never finished as `RunFailed` (its node died): printed `failed <tenant> run-N`.
 *   claim <url> <node> <team>
 *     Prints "ready", waits for "go" on stdin, then this node's agents of `team` (JSON: a RaceTeam of
 *     test/helpers/race-team.ts, and `slice`, the [from, to) of its agents that are this node's) claim its task at once, each with the real claim_task action run
 *     as a unit of work (actions/tasks/claim.ts); prints {"won": w, "refused": {code: count}}.
 *   spend <url> <node> <team>
 *     The same, but the owner reports 2 tokens of spend on the task once per agent listed, with the real
 *     report_usage action (the task's and the goal's budget reactions in the same unit).
 *   sweep <url> <node> <sweepMs>
 *     Runs the product's lease sweeper on the tenants it leads (runtime/tenant-jobs.ts): prints `gain T`,
 *     `lose T` and `expired T <task ids> by <node>`; stops on a line on stdin.
 *   write <url> <tenant> <n>
 *     Appends n events to stream note-1 of the tenant, one command each, then prints `wrote` and exits.
 */
const [mode, url, ...rest] = process.argv.slice(2);
const say = (line: string) => process.stdout.write(`${line}\n`);

if (mode === 'claim' || mode === 'spend') {
  const [node, json] = rest as [string, string];
  // The whole team, and which of its agents are this node's: [from, to).
  const { slice, ...team } = JSON.parse(json) as RaceTeam & { slice: [number, number] };
  const store = await PgEventStore.open(url!, { poolSize: 8, projections: productProjections });
  say('ready');
  // The parent's "go"; then stdin is let go, or it would keep this process alive after its answer.
  const lines = createInterface({ input: process.stdin });
  await new Promise<void>((resolve) => lines.once('line', () => resolve()));
  lines.close();
  process.stdin.destroy();
  const { tenant, taskId } = team;
  const mine = Array.from({ length: slice[1] - slice[0] }, (_, k) => slice[0] + k);
  const outcomes = await Promise.allSettled(
    mine.map(async (i) => {
      if (mode === 'spend') {
        const usage = { tokens: 2, cents: 0, note: `report ${node}.${i}`, source: 'report_usage' as const };
        return store.unit(tenant, { actor: 'user:owner' }, () => reportUsageUnit(ownerOf(team), taskId, usage));
      }
      const agent = agentOf(team, i);
      return claimedBy(
        await store.unit(tenant, { actor: `agent:${agent.key}` }, () => claimTaskUnit(agent, taskId)),
        taskId,
      );
    }),
  );
  const refused: Record<string, number> = {};
  for (const o of outcomes)
    if (o.status === 'rejected') {
      const code = isDomainError(o.reason) ? o.reason.code : String(o.reason);
      refused[code] = (refused[code] ?? 0) + 1;
    }
  say(JSON.stringify({ won: outcomes.filter((o) => o.status === 'fulfilled').length, refused }));
  await store.close();
} else if (mode === 'sweep') {
  // The product's lease sweeper, on the tenants this node leads (runtime/tenant-jobs.ts).
  const [node, sweepMs] = rest as [string, string];
  const store = await PgEventStore.open(url!, { poolSize: 4, projections: productProjections });
  const jobs = await TenantJobs.start(store, {
    sweepMs: Number(sweepMs),
    leadershipMs: 300,
    onGain: (tenant) => say(`gain ${tenant}`),
    onLose: (tenant) => say(`lose ${tenant}`),
    onSwept: (tenant, ids) => say(`expired ${tenant} ${ids.join(',')} by ${node}`),
  });
  say('ready');
  const lines = createInterface({ input: process.stdin });
  await new Promise<void>((resolve) => lines.once('line', () => resolve()));
  lines.close();
  process.stdin.destroy();
  await jobs.stop();
  await store.close();
} else if (mode === 'write') {
  const [tenant, n] = rest as [string, string];
  const store = await PgEventStore.open(url!);
  for (let i = 0; i < Number(n); i++)
    await store.append({
      tenant,
      streamId: 'note-1',
      expected: 'any',
      events: [{ type: 'Noted', data: { i } }],
      actor: 'writer',
    });
  await store.close();
  say('wrote');
} else if (mode === 'lead') {
  const [node, tenantList, runMs] = rest as [string, string, string];
  const store = await PgEventStore.open(url!, { poolSize: 4 });
  const tenants = tenantList.split(',');
  const mine = new Set<string>(); // runs this process is executing now
  const led = new Set<string>(); // tenants this node leads, as onGain/onLose said

  const runsOf = async (tenant: string) => {
    const runs = new Map<string, { last: string; version: number; actor: string }>();
    for (let after = 0; ;) {
      const rows = await store.readRows(tenant, after, 1000);
      for (const r of rows)
        if (r.stream_id.startsWith('run-'))
          runs.set(r.stream_id, {
            last: r.type,
            version: r.version,
            actor: (JSON.parse(r.meta) as { actor: string }).actor,
          });
      if (rows.length < 1000) return runs;
      after = rows[rows.length - 1]!.position;
    }
  };
  const appendOnce = async (tenant: string, streamId: string, expected: number, type: string) => {
    try {
      await store.append({ tenant, streamId, expected, events: [{ type, data: { node } }], actor: node });
      return true;
    } catch (e) {
      if (isDomainError(e) && e.code === 'ErrConcurrency') return false; // another node got there first
      throw e;
    }
  };
  const react = async (tenant: string, recover: boolean) => {
    for (const [run, state] of await runsOf(tenant)) {
      if (!led.has(tenant)) return;
      if (recover && state.last === 'RunStarted' && !mine.has(`${tenant}/${run}`)) {
        if (await appendOnce(tenant, run, state.version, 'RunFailed')) say(`failed ${tenant} ${run}`);
      } else if (state.last === 'RunQueued' && (await appendOnce(tenant, run, 1, 'RunStarted'))) {
        say(`started ${tenant} ${run}`);
        mine.add(`${tenant}/${run}`);
        setTimeout(() => {
          void appendOnce(tenant, run, 2, 'RunFinished').then((done) => {
            mine.delete(`${tenant}/${run}`);
            if (done) say(`finished ${tenant} ${run}`);
          });
        }, Number(runMs));
      }
    }
  };
  // One reaction at a time per node: a wake-up during a reaction runs another round after it.
  let reacting: Promise<void> = Promise.resolve();
  const schedule = (tenant: string, recover = false) =>
    (reacting = reacting
      .then(() => react(tenant, recover))
      .catch((e: Error) => {
        say(`error ${e.message}`);
      }));
  await TenantLeadership.start(store.target, {
    tenants: () => tenants,
    intervalMs: 200,
    onGain: (tenant) => (led.add(tenant), say(`gain ${tenant}`), void schedule(tenant, true)),
    onLose: (tenant) => (led.delete(tenant), say(`lose ${tenant}`)),
  });
  await PgTail.start(store, {
    pollMs: 500,
    onEvents: (events) => {
      for (const tenant of new Set(events.map((e) => e.tenant))) if (led.has(tenant)) void schedule(tenant);
    },
  });
  say('ready');
} else {
  process.stderr.write(`unknown mode ${mode}\n`);
  process.exit(2);
}
