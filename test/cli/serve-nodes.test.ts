import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { registerAgent } from '../../src/actions/principals.js';
import { openApp, productProjections } from '../../src/app.js';
import { PgEventStore } from '../../src/engine/pg/store.js';
import { tempDir } from '../../testkit/temp-dir.js';
import { colonyLive, stdioClient, type LiveCli } from '../helpers/cli.js';
import { pgScratch, pgSkip } from '../helpers/pg.js';
import { makeTeam, type RaceTeam } from '../helpers/race-team.js';
import { assertRebuildEqual } from '../helpers/read-models.js';

/**
 * Three `colony serve` nodes on one PostgreSQL store serving one tenant, driven by real MCP clients over
 * HTTP: races across nodes decided once, every node reading every node's writes, and the node that runs
 * the tenant's agents killed -9 in the middle of a run. After every test the store's chain verifies and
 * its read models equal a fresh rebuild.
 */
const TENANT = 'acme';
const LEADS = /this node now runs the tenant’s background jobs/;
const lives: LiveCli[] = [];
after(() => lives.forEach((l) => l.proc.kill('SIGKILL')));

interface Node {
  live: LiveCli;
  base: string;
}

interface Cluster {
  url: string;
  /** The data dir the nodes share (the keys). */
  data: string;
  team: RaceTeam;
  store: PgEventStore;
  nodes: Node[];
  /** A client of the node; `untracked`: never closed (one whose node is killed keeps a request pending that close would reject). */
  client(node: number, token: string, untracked?: boolean): Promise<Client>;
}

async function startNode(url: string, data: string): Promise<Node> {
  const live = colonyLive(['--store', url, 'serve', '--data', data, '--port', '0', '--sandbox', 'off']);
  lives.push(live);
  const line = await live.waitFor(/listening on http:\/\/127\.0\.0\.1:\d+/, 'stderr');
  return { live, base: line.match(/http:\/\/127\.0\.0\.1:\d+/)![0] };
}

/**
 * A team made with the real actions straight on the store (the owner, `agents` agents, a goal with a
 * budget of `budget` tokens and one approved task), then three nodes — the first one started leads.
 */
async function withCluster(
  agents: number,
  budget: number,
  setup: (app: ReturnType<typeof openApp>, team: RaceTeam) => void,
  body: (c: Cluster) => Promise<void>,
): Promise<void> {
  const scratch = pgScratch();
  const dir = tempDir();
  const url = `${scratch.url}&tenant=${TENANT}`;
  const clients: Client[] = [];
  const app = openApp({ dataDir: dir.dir, durability: 'normal', store: { url, tenant: TENANT } });
  let team: RaceTeam;
  try {
    team = { tenant: TENANT, ...makeTeam(app, agents, budget) };
    setup(app, team);
  } finally {
    app.engine.close();
  }
  const store = await PgEventStore.open(scratch.url, { projections: productProjections });
  try {
    const first = await startNode(url, dir.dir);
    await first.live.waitFor(LEADS, 'stderr');
    const nodes = [first, ...(await Promise.all([startNode(url, dir.dir), startNode(url, dir.dir)]))];
    const client = async (node: number, token: string, untracked = false) => {
      const c = new Client({ name: `node-${node}`, version: '0' });
      await c.connect(
        new StreamableHTTPClientTransport(new URL('/mcp', nodes[node]!.base), {
          requestInit: { headers: { Authorization: `Bearer ${token}` } },
        }),
      );
      if (!untracked) clients.push(c);
      return c;
    };
    await body({ url, data: dir.dir, team, store, nodes, client });
    await closeAll(clients);
    for (const n of nodes.filter((x) => x.live.proc.signalCode === null)) assert.equal(await n.live.stop(), 0);
    assert.equal((await store.verify()).get(TENANT)?.ok, true);
    await assertRebuildEqual(store, TENANT);
  } finally {
    await closeAll(clients);
    await store.close();
    await scratch.drop();
    dir.cleanup();
  }
}

/** A client whose node died may throw from close() itself (its transport's onclose): that is not the test's failure. */
const closeAll = (clients: Client[]) =>
  Promise.all(
    clients.splice(0).map((c) =>
      Promise.resolve()
        .then(() => c.close())
        .catch(() => undefined),
    ),
  );

type Result = CallToolResult & { structuredContent?: Record<string, unknown> };
/** A call; its promise counts as handled, so a call a failed test abandoned cannot mask the failure when its client closes. */
function call(c: Client, name: string, args: Record<string, unknown>): Promise<Result> {
  const answer = c.callTool({ name, arguments: args }) as Promise<Result>;
  answer.catch(() => undefined);
  return answer;
}
const codeOf = (r: Result) => (r.content[0] as { text: string }).text.match(/^(Err\w+)/)?.[1] ?? 'unknown';

async function until<T>(probe: () => Promise<T | undefined>, ms: number, what: string): Promise<T> {
  const start = Date.now();
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() - start > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('colony serve nodes on one PostgreSQL store', { skip: pgSkip }, () => {
  it('lets exactly one of 100 agents, connected to 3 nodes, claim a task; every node shows it, and streams another node’s commits', () =>
    withCluster(
      100,
      1000,
      () => undefined,
      async ({ team, nodes, client }) => {
        const agents = await Promise.all(team.agentTokens.map((token, i) => client(i % 3, token)));
        const results = await Promise.all(agents.map((a) => call(a, 'claim_task', { task_id: team.taskId })));
        const refused: Record<string, number> = {};
        for (const r of results.filter((x) => x.isError)) refused[codeOf(r)] = (refused[codeOf(r)] ?? 0) + 1;
        assert.deepEqual([results.filter((r) => !r.isError).length, refused], [1, { ErrAlreadyClaimed: 99 }]);
        const winner = team.agentIds[results.findIndex((r) => !r.isError)];
        for (let node = 0; node < 3; node++) {
          const owner = await client(node, team.ownerToken);
          const task = await until(
            async () => {
              const goal = (await call(owner, 'get_goal', { goal_id: team.goalId })).structuredContent!;
              const [t] = goal.tasks_tree as { status: string; assignee: { id: number } }[];
              return t!.status === 'claimed' ? t : undefined;
            },
            10_000,
            `node ${node} to show the claim`,
          );
          assert.equal(task.assignee.id, winner, JSON.stringify(task));
        }
        // The SSE stream of one node carries another node's commit.
        const stream = new AbortController();
        const events = await fetch(new URL('/api/events?after=now&types=MessagePosted', nodes[2]!.base), {
          headers: { Authorization: `Bearer ${team.ownerToken}` },
          signal: stream.signal,
        });
        assert.equal(events.status, 200);
        const owner = await client(0, team.ownerToken);
        await call(owner, 'send_message', { channel: 'requests', body: 'written on node 0' });
        try {
          const frames = await readUntil(events.body!.getReader(), /written on node 0/, 10_000);
          assert.match(frames, /event: MessagePosted\n/);
        } finally {
          stream.abort();
        }
      },
    ));

  it('raises exactly one 80 % alert and one pause when 60 usage reports race through 2 nodes and a colony stdio', () =>
    // 60 reports of 2 tokens on a budget of 100: the alert at 80, the pause at 100, whatever the order.
    withCluster(
      1,
      100,
      () => undefined,
      async ({ url, data, team, store, client }) => {
        const stdio = await stdioClient(data, team.ownerToken, undefined, { COLONY_STORE: url });
        const owners = [await client(0, team.ownerToken), await client(1, team.ownerToken), stdio];
        const report = (i: number) =>
          call(owners[i % 3]!, 'report_usage', { task_id: team.taskId, tokens: 2, cost_cents: 0, note: `r${i}` });
        const results = await Promise.all(Array.from({ length: 60 }, (_, i) => report(i)));
        assert.deepEqual(
          results.filter((r) => r.isError).map((r) => (r.content[0] as { text: string }).text),
          [],
        );
        const types = (await store.readStream(TENANT, `goal-${team.goalId}`)).map((e) => e.type);
        assert.equal(types.filter((t) => t === 'BudgetAlertRaised').length, 1, types.join());
        assert.equal(types.filter((t) => t === 'GoalPaused').length, 1, types.join());
        const goal = (await call(owners[2]!, 'get_goal', { goal_id: team.goalId })).structuredContent!;
        assert.equal((goal.goal as { status: string }).status, 'paused');
        const health = (await call(owners[0]!, 'system_health', {})).structuredContent!;
        const path = (health.db as { path: string }).path;
        assert.match(
          path,
          /^PostgreSQL store, schema "t_[0-9a-f]+", tenant "acme", copied to \/.*\/copies\/t_[0-9a-f]+-[0-9a-f]{16}(\.\d+)?\.db$/,
        );
        assert.doesNotMatch(path, /127\.0\.0\.1|postgres@/, 'an agent-visible view never names the server or user');
        await stdio.close();
      },
    ));

  it('after kill -9 of the node running an agent, another node takes over: the cut run fails, the queued one runs once', (t) =>
    withCluster(
      0,
      1000,
      (app, team) =>
        void registerAgent(
          app,
          {
            name: 'sleeper',
            ownerId: team.ownerId,
            model: 'test-model',
            systemPrompt: 'Sleep.',
            toolScope: ['report_usage'],
            tier: 'supervised',
            command: 'sleep 2',
            parentId: null,
            spawnDepth: 0,
          },
          { actor: 'user:owner' },
        ),
      async ({ store, nodes, client, team }) => {
        const [zero, second, third] = await Promise.all([0, 1, 2].map((n) => client(n, team.ownerToken, n === 0)));
        // A write answered by the node about to die is in the store: a client that reconnects elsewhere sees it.
        const sent = await call(zero!, 'send_message', { channel: 'requests', body: 'written before the crash' });
        assert.equal(sent.structuredContent?.status, 'sent');
        const stream = async (run: number) => (await store.readStream(TENANT, `run-${run}`)).map((e) => e.type);
        const lifecycle = async (run: number) =>
          (await stream(run)).filter((e) => ['RunQueued', 'RunStarted', 'RunFinished', 'RunFailed'].includes(e));
        // Asked on nodes that do not run agents: the runs are queued in the log for the leader.
        const one = call(second!, 'execute_agent', { agent_name: 'sleeper', prompt: 'one' });
        await until(async () => ((await stream(1)).includes('RunStarted') ? true : undefined), 10_000, 'run 1');
        const two = call(third!, 'execute_agent', { agent_name: 'sleeper', prompt: 'two' });
        await until(async () => ((await stream(2)).includes('RunQueued') ? true : undefined), 10_000, 'run 2 queued');
        nodes[0]!.live.proc.kill('SIGKILL');
        const killedAt = Date.now();
        await Promise.any(nodes.slice(1).map((n) => n.live.waitFor(LEADS, 'stderr')));
        t.diagnostic(`takeover after kill -9: ${Date.now() - killedAt} ms`);
        await assert.rejects(call(zero!, 'whoami', {}), 'the dead node’s session is gone with it');
        const again = await client(1, team.ownerToken);
        const read = await call(again, 'get_channel_messages', { channel_name: 'requests' });
        assert.match(JSON.stringify(read.structuredContent), /written before the crash/);
        const [first, next] = await Promise.all([one, two]);
        assert.equal(first.structuredContent!.status, 'error', JSON.stringify(first.structuredContent));
        assert.equal(next.structuredContent!.status, 'success', JSON.stringify(next.structuredContent));
        assert.deepEqual(await lifecycle(1), ['RunQueued', 'RunStarted', 'RunFailed']);
        assert.deepEqual(await lifecycle(2), ['RunQueued', 'RunStarted', 'RunFinished'], 'the queued run ran once');
        const failed = (await store.readStream(TENANT, 'run-1')).find((e) => e.type === 'RunFailed')!;
        assert.match(JSON.stringify(failed.data), /Colony stopped while this run was in progress/);
        assert.equal(nodes.slice(1).filter(leads).length, 1, 'one node leads the tenant');
      },
    ));
});

/** What a stream sends until `pattern` shows in it (or `ms` pass: then what came, for the assertion to show). */
async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, pattern: RegExp, ms: number) {
  const decoder = new TextDecoder();
  let text = '';
  const deadline = Date.now() + ms;
  while (!pattern.test(text) && Date.now() < deadline) {
    const next = await Promise.race([
      reader.read(),
      new Promise<null>((resolve) => setTimeout(() => resolve(null), deadline - Date.now())),
    ]);
    if (!next || next.done) break;
    text += decoder.decode(next.value, { stream: true });
  }
  return text;
}

const leads = (n: Node): boolean => n.live.stderrLines.some((l) => LEADS.test(l));
