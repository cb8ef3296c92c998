import { join } from 'node:path';
import { openApp } from '../src/app.js';
import { benchClaimComplete } from './claim-complete.js';
import { benchCommands } from './commands.js';
import { benchGroupCommit } from './group-commit.js';
import { createTeam, seedGoals } from './goal-data.js';
import { benchGoalSnapshot } from './goal-snapshot.js';
import { benchGoalsList } from './goals-list.js';
import { benchMcpHttp, benchMcpStdio } from './mcp.js';
import { benchMcpHttpExt, EXT_FULL, EXT_QUICK } from './mcp-ext.js';
import { benchMcpInProcess } from './mcp-inprocess.js';
import { benchMcpSessionFlood } from './mcp-sessions.js';
import { benchRebuild } from './rebuild.js';
import { benchReputation } from './reputation.js';
import { benchSpawn } from './spawn.js';
import { benchRunOverhead } from './run-overhead.js';
import { benchBudgetStop } from './budget-stop.js';
import { benchBreakers } from './breakers.js';
import { benchRuntimes } from './runtimes.js';
import { benchApps } from './apps.js';
import { benchCliStart } from './cli-start.js';
import { benchDemo } from './demo.js';
import { benchReplay } from './replay.js';
import { benchConsole, benchScrub } from './console.js';
import { benchConsoleNeeds } from './console-needs.js';
import { benchSse } from './sse.js';
import { benchEvidence } from './evidence.js';
import { benchFlat, FLAT_FULL, FLAT_QUICK } from './flat-cost.js';
import { benchPostgres } from './pg.js';
import { benchPgReadModels } from './pg-read-models.js';
import { benchPgLock } from './pg-lock.js';
import { benchPgServe } from './pg-serve.js';
import { benchPgStart } from './pg-start.js';
import { benchStorePort } from './store-port.js';
import { scratchDir, seconds, type Figure } from './util.js';

/**
 * The benchmark suite behind `colony bench`. Every figure carries the baseline it was measured against
 * in the same run, because these machines are noisy: compare ratios, not absolute numbers.
 */
const TARGETS: Record<string, string> = {
  commands_per_s_full: 'ratio >= 0.6',
  commands_per_s_normal: 'ratio >= 0.6',
  commands_per_s_full_grouped: 'ratio >= 1.0 (FULL at a speed that needed NORMAL)',
  commands_per_s_full_grouped_1: 'ratio ~ 1 (no added latency for a lone caller)',
  rebuild_events_per_s: '>= 250k/s, ratio >= 0.8',
  commands_vs_sql_floor_full: '(diagnostic)',
  commands_vs_sql_floor_normal: '(diagnostic)',
  verify_events_per_s: '>= 300k/s',
  rebuild_rss_mb: '< 300 MB',
  mcp_http_calls_per_s: '>= 2,000/s, ratio >= 0.7',
  mcp_stdio_calls_per_s: 'ratio >= 0.9',
  cli_start_ms: 'ratio <= 0.6 (the bundle against tsx on the sources)',
  cli_command_ms: 'ratio <= 0.7',
  mcp_inprocess_send_message_per_s: '(diagnostic: what a write costs beyond a read, no HTTP)',
  mcp_http_ext_calls_per_s_2025: 'ratio >= 0.9',
  mcp_http_ext_calls_per_s_2026: '(no target yet)',
  mcp_http_ext_calls_per_s_stateless: 'ratio >= 0.9',
  mcp_http_ext_2026_vs_2025: '(diagnostic)',
  mcp_http_ext_p99_ms_2025: '(no target yet)',
  mcp_http_ext_p99_ms_2026: '(no target yet)',
  mcp_http_ext_send_message_per_s: 'ratio >= 0.6',
  mcp_http_ext_send_message_per_s_stateless: 'ratio >= 0.6',
  mcp_http_ext_send_message_p99_ms: '(no target yet)',
  mcp_http_ext_send_message_late_per_s: '(diagnostic: ~1 = no slower as the channel fills)',
  claim_complete_per_s: 'ratio >= 0.7',
  mcp_session_flood_rss_mb: 'ratio < 1.25 (bounded by the session caps)',
  goal_snapshot_ms: '< 20 ms',
  goal_snapshot_p95_ms: '< 20 ms',
  goals_list_ms: '< 100 ms at 100 goals (SC-011: < 1 s)',
  goals_list_p95_ms: '< 100 ms at 100 goals (SC-011: < 1 s)',
  replay_ms: '< 500 ms',
  reputation_read_ms: '< 5 ms',
  reputation_read_p95_ms: '< 5 ms',
  run_overhead_ms: '< 50 ms',
  budget_stop_ms: "< 1 s (budget reached → the run's process gone)",
  breakers_commands_per_s: 'ratio >= 0.95 (no measurable change: breakers on vs all thresholds 0)',
  run_sandbox_overhead_ms: '<= 50 ms (what confinement adds)',
  runtime_first_call_ms_claude_code: "(diagnostic: the CLI's own start-up + one model turn over the floor)",
  runtime_first_call_ms_codex: '(diagnostic)',
  runtime_first_call_ms_opencode: '(diagnostic)',
  runtime_adapter_overhead_ms: '< 50 ms (what an adapter adds to a run)',
  apps_static_per_s: 'ratio >= 0.5 (a walk without symlinks, headers, on every request)',
  sse_latency_ms: '< 50 ms (p95 is the target)',
  sse_latency_p95_ms: '< 50 ms',
  console_goals_ms: '< 1 s at 100 goals × 1,000 tasks (SC-011)',
  console_live_ms: '< 1 s (SC-001: < 10 s)',
  console_scrub_ms: '< 400 ms',
  console_scrub_p95_ms: '< 400 ms',
  console_needs_ms: '< 300 ms (50 pending items over 100 goals × 1,000 tasks)',
  console_decision_ms: '< 500 ms, click → gone from every open tab (SC-001: a change shows in < 10 s)',
  console_decision_p95_ms: '< 500 ms',
  evidence_append_commands_per_s: 'ratio >= 0.9',
  evidence_append_serve_commands_per_s: '(serve as it runs)',
  evidence_export_s: '< 2 s at 10,000 events of 1,000,000',
  evidence_export_bytes: '(diagnostic)',
  evidence_proof_hashes: '~ log2 n (ratio ~1)',
  evidence_merkle_extend_s: '(diagnostic: one-time)',
  evidence_checkpoint_ms: '(diagnostic)',
  evidence_verify_events_per_s: 'ratio >= 0.5',
  evidence_verify_vs_parse_floor: '(diagnostic)',
  evidence_replay_events_per_s: '(no target yet)',
  evidence_verify_tool_events_per_s: '(no target yet)',
  flat_send_message_per_s: 'ratio >= 0.9',
  flat_claim_complete_per_s: 'ratio >= 0.9',
  flat_command_1m_per_s: 'ratio >= 0.9',
  store_port_sqlite_commands_per_s: 'ratio >= 0.9 (the async port costs < 10 %)',
  pg_commands_per_s_nodes_1: '(the curve: how it grows with nodes)',
  pg_commands_per_s_nodes_2: '(the curve: how it grows with nodes)',
  pg_commands_per_s_nodes_4: '(the curve: how it grows with nodes)',
  pg_commands_per_s_one_tenant: '(diagnostic: one chain serializes)',
  pg_rebuild_events_per_s: '(how a PostgreSQL rebuild compares with SQLite)',
  pg_append_with_read_models: 'ratio >= 0.5 (read models in the append transaction)',
  pg_mcp_calls_per_s_nodes_1: '(the curve: MCP calls through colony serve nodes)',
  pg_mcp_calls_per_s_nodes_2_one_tenant: '(the curve: one tenant, its chain serializes)',
  pg_mcp_calls_per_s_nodes_3_one_tenant: '(the curve: one tenant, its chain serializes)',
  pg_mcp_calls_per_s_nodes_2_one_tenant_vs_1: '(the curve: what a second node of one tenant adds)',
  pg_mcp_calls_per_s_nodes_3_one_tenant_vs_1: '(the curve: what a third node of one tenant adds)',
  pg_lock_held_ms: 'ratio < 1',
  pg_mcp_calls_per_s_nodes_2_two_tenants: '(the curve: tenants commit in parallel)',
  pg_node_start_s_100k: '< 5 s (spawn → listening; the ratio is against serve on SQLite of the same log)',
  pg_node_start_s_1m: '< 5 s, ratio ~ pg_node_start_s_100k (nothing at start grows with the tenant)',
  pg_node_rss_mb_100k: 'ratio ~ 1 (RSS flat: nothing at start holds the tenant in memory)',
  pg_node_rss_mb_1m: 'ratio ~ 1 (RSS flat: nothing at start holds the tenant in memory)',
  pg_node_first_start_s_100k: '(diagnostic: the first start copies the whole tenant)',
  pg_node_first_start_s_1m: '(diagnostic: the first start copies the whole tenant)',
};

const BASELINES: Record<string, string> = {
  commands_per_s_full: 'raw 1-row IMMEDIATE txn, FULL',
  commands_per_s_normal: 'raw 1-row IMMEDIATE txn, NORMAL',
  commands_per_s_full_grouped: 'raw 1-row IMMEDIATE txn, FULL',
  commands_per_s_full_grouped_1: 'the same commands ungrouped, one caller, FULL',
  commands_vs_sql_floor_full: 'same writes as bare SQL, FULL',
  commands_vs_sql_floor_normal: 'same writes as bare SQL, NORMAL',
  rebuild_events_per_s: 'raw read-and-upsert loop',
  verify_events_per_s: 'raw sha256 loop over rows',
  rebuild_rss_mb: 'RSS before the rebuild',
  mcp_http_calls_per_s: 'SDK minimal server, 10 HTTP sessions',
  mcp_stdio_calls_per_s: 'SDK minimal server over stdio',
  mcp_inprocess_send_message_per_s: 'whoami calls/s, same SDK Client, InMemoryTransport, 10 callers',
  mcp_http_ext_calls_per_s_2025: 'SDK v1 minimal stateful server, own process',
  mcp_http_ext_calls_per_s_2026: 'SDK v2 minimal stateless server, own process',
  mcp_http_ext_calls_per_s_stateless: 'SDK v1 minimal stateless server, JSON mode, own process',
  mcp_http_ext_2026_vs_2025: 'the same colony serve, 2025-11-25 session calls',
  mcp_http_ext_p99_ms_2025: 'p99 of the SDK v1 minimal stateful server',
  mcp_http_ext_p99_ms_2026: 'p99 of the SDK v2 minimal stateless server',
  mcp_http_ext_send_message_per_s: 'whoami calls/s, same colony serve, 2025-11-25',
  mcp_http_ext_send_message_per_s_stateless: 'whoami calls/s, same colony serve, 2026-07-28 (no session)',
  mcp_http_ext_send_message_p99_ms: 'p99 of whoami, same colony serve, 2025-11-25',
  mcp_http_ext_send_message_late_per_s: 'send_message calls/s of the first measured round',
  claim_complete_per_s: 'whoami pairs/s, same server and 10 agent sessions',
  mcp_session_flood_rss_mb: 'RSS of the same server idle',
  goal_snapshot_ms: 'raw SELECT * FROM tasks WHERE goal_id=?',
  goal_snapshot_p95_ms: 'raw SELECT * FROM tasks WHERE goal_id=?',
  goals_list_ms: 'GET /health, same server',
  goals_list_p95_ms: 'GET /health, same server',
  replay_ms: 'raw SELECT of the same event rows',
  reputation_read_ms: 'raw SELECT of the same evidence rows',
  reputation_read_p95_ms: 'raw SELECT of the same evidence rows',
  spawn_per_s: 'whoami calls/s, same session',
  run_overhead_ms: 'raw spawn of sh -c true, same stdio',
  budget_stop_ms: 'the same loop spawned raw, SIGTERM to its group → close',
  breakers_commands_per_s: 'the same command mix with every breaker threshold 0 (off), same data dir, NORMAL',
  run_sandbox_overhead_ms: 'the same run unconfined (ms)',
  runtime_first_call_ms_claude_code: 'a command agent connecting and calling whoami, no model (ms)',
  runtime_first_call_ms_codex: 'a command agent connecting and calling whoami, no model (ms)',
  runtime_first_call_ms_opencode: 'a command agent connecting and calling whoami, no model (ms)',
  runtime_adapter_overhead_ms: 'the same stand-in CLI as a command run (ms)',
  apps_static_per_s: 'a bare node:http server streaming the same file by path (requests/s)',
  console_goals_ms: 'the same page as static HTML, same browser',
  console_live_ms: 'GET /health from the same page',
  console_scrub_ms: 'GET of the live snapshot from the same page',
  console_scrub_p95_ms: 'GET of the live snapshot from the same page',
  console_needs_ms: 'the same page as static HTML, same browser',
  console_decision_ms: 'the same approval as a bare POST /api/proposals/:id/approve from the page',
  console_decision_p95_ms: 'the same approval as a bare POST /api/proposals/:id/approve from the page',
  demo_s: 'one colony --help process (s)',
  cli_start_ms: 'the same command from the sources through tsx (COLONY_CLI_SOURCES=1), alternated',
  cli_command_ms: 'the same command from the sources through tsx (COLONY_CLI_SOURCES=1), alternated',
  sse_latency_ms: 'GET /health round trip, same server',
  sse_latency_p95_ms: 'GET /health round trip, same server',
  evidence_append_commands_per_s: 'same mix, no tree or checkpoints, NORMAL',
  evidence_append_serve_commands_per_s: 'same mix, no tree or checkpoints, NORMAL',
  evidence_export_s: "raw SELECT of the goal's rows + JSON.stringify (s)",
  evidence_export_bytes: 'bytes of those raw rows as JSON',
  evidence_proof_hashes: 'log2 of the tree size',
  evidence_merkle_extend_s: 'raw read of every hash + leaf sha256 (s)',
  evidence_checkpoint_ms: '1,000 commands without the tree (ms)',
  evidence_verify_events_per_s: 'raw sha256 loop over the canonical rows',
  evidence_verify_vs_parse_floor: 'JSON.parse of the bundle + that sha256 loop',
  evidence_replay_events_per_s: 'raw sha256 loop over the canonical rows',
  evidence_verify_tool_events_per_s: 'raw sha256 loop over the canonical rows',
  flat_send_message_per_s: 'send_message into an empty channel, same tenant and app, NORMAL',
  flat_claim_complete_per_s: 'the same pairs in goals of 18 tasks, same app, NORMAL',
  flat_command_1m_per_s: 'the same mix (send_message + claim/complete) on a fresh data dir, NORMAL',
  store_port_sqlite_commands_per_s: 'the same appends through the sync engine, NORMAL',
  pg_commands_per_s_nodes_1: 'pgbench -N tps, same clients, same server',
  pg_commands_per_s_nodes_2: 'pgbench -N tps, same clients, same server',
  pg_commands_per_s_nodes_4: 'pgbench -N tps, same clients, same server',
  pg_commands_per_s_one_tenant: 'pgbench -N tps, same clients, same server',
  pg_rebuild_events_per_s: "SQLite's rebuild of the same log, same projections",
  pg_append_with_read_models: 'the same appends with no read models',
  pg_mcp_calls_per_s_nodes_1: 'one colony serve on SQLite, same load (autocannon, send_message)',
  pg_mcp_calls_per_s_nodes_2_one_tenant: 'one colony serve on SQLite, same load (autocannon, send_message)',
  pg_mcp_calls_per_s_nodes_3_one_tenant: 'one colony serve on SQLite, same load (autocannon, send_message)',
  pg_mcp_calls_per_s_nodes_2_one_tenant_vs_1: 'one colony serve node of the tenant on PostgreSQL, same load',
  pg_mcp_calls_per_s_nodes_3_one_tenant_vs_1: 'one colony serve node of the tenant on PostgreSQL, same load',
  pg_lock_held_ms: 'the same writes taking the lock first (lock, decide, one-round-trip commit), same node, same run',
  pg_mcp_calls_per_s_nodes_2_two_tenants: 'one colony serve on SQLite, same load (autocannon, send_message)',
  pg_node_start_s_100k: 'colony serve on the SQLite data dir of the same log, its second start, same run',
  pg_node_start_s_1m: 'colony serve on the SQLite data dir of the same log, its second start, same run',
  pg_node_rss_mb_100k: 'RSS of a node of an empty tenant, same run',
  pg_node_rss_mb_1m: 'RSS of a node of an empty tenant, same run',
  pg_node_first_start_s_100k: 'colony serve on the SQLite data dir of the same log, same run',
  pg_node_first_start_s_1m: 'colony serve on the SQLite data dir of the same log, same run',
};

/** The groups COLONY_BENCH_ONLY can name, in the order they run. */
const GROUPS = [
  'commands',
  'mcp',
  'mcp_ext',
  'claim_complete',
  'sessions',
  'goals',
  'sse',
  'replay',
  'reputation',
  'spawn',
  'runs',
  'budget',
  'breakers',
  'runtimes',
  'apps',
  'cli',
  'demo',
  'rebuild',
  'evidence',
  'flat',
  'postgres',
];

export interface BenchOptions {
  json: boolean;
  quick: boolean;
  /** The PostgreSQL server of the `postgres` group (--store, else $COLONY_TEST_PG); without one it is skipped. */
  pgUrl?: string | null;
}

export async function runBench(options: BenchOptions): Promise<Record<string, Figure>> {
  // COLONY_BENCH_ONLY=evidence,rebuild (comma-separated groups) runs only those groups; unset runs all.
  const only = new Set(
    (process.env.COLONY_BENCH_ONLY ?? '')
      .split(',')
      .map((g) => g.trim())
      .filter(Boolean),
  );
  const unknown = [...only].filter((g) => !GROUPS.includes(g));
  if (unknown.length)
    throw new Error(`COLONY_BENCH_ONLY: unknown group ${unknown.join(', ')} (groups: ${GROUPS.join(', ')})`);
  const want = (group: string) => only.size === 0 || only.has(group);
  const { dir, cleanup } = scratchDir();
  const say = (s: string) => {
    if (!options.json) process.stderr.write(`${s}\n`);
  };
  const results: Record<string, Figure> = {};
  try {
    const rounds = options.quick ? 1 : 3;
    if (want('commands')) {
      say('commands, durability FULL…');
      const full = benchCommands(dir, 'full', options.quick ? 1500 : 5000, rounds);
      say('commands, durability NORMAL…');
      const normal = benchCommands(dir, 'normal', options.quick ? 5000 : 20000, rounds);
      results.commands_per_s_full = full.vsRaw;
      results.commands_per_s_normal = normal.vsRaw;
      results.commands_vs_sql_floor_full = full.vsFloor;
      results.commands_vs_sql_floor_normal = normal.vsFloor;
      say('commands, durability FULL, group commit…');
      Object.assign(results, await benchGroupCommit(dir, options.quick ? 1500 : 5000, rounds));
      say('commands through the store port (async) on SQLite, NORMAL…');
      results.store_port_sqlite_commands_per_s = await benchStorePort(dir, options.quick ? 5000 : 20000, rounds + 2);
    }
    // Before the rebuild's seeding, whose garbage would otherwise land on these in-process figures. The SDK
    // client and server need a few seconds (HTTP) or a few thousand calls (stdio) before their rate settles.
    if (want('mcp')) {
      say('MCP tools/call over Streamable HTTP, 10 sessions…');
      results.mcp_http_calls_per_s = await benchMcpHttp(
        dir,
        options.quick ? { seconds: 1, rounds: 3, warmup: 2.5 } : { seconds: 3, rounds: 5, warmup: 3 },
      );
      say('MCP tools/call over stdio, sequential…');
      results.mcp_stdio_calls_per_s = await benchMcpStdio(
        dir,
        options.quick ? { calls: 1000, rounds: 3, warmup: 2000 } : { calls: 3000, rounds: 5, warmup: 3000 },
      );
      say('MCP send_message against whoami in-process, 10 callers…');
      results.mcp_inprocess_send_message_per_s = await benchMcpInProcess(
        dir,
        options.quick ? { calls: 1500, rounds: 3, warmup: 1000 } : { calls: 4000, rounds: 5, warmup: 2000 },
      );
    }
    // Servers and load generator in child processes: this process only waits, so its heap does not matter.
    if (want('mcp_ext')) {
      say(
        'MCP tools/call over Streamable HTTP from outside: autocannon against `colony serve` and the SDK servers, both revisions, and send_message into one channel…',
      );
      Object.assign(results, await benchMcpHttpExt(dir, options.quick ? EXT_QUICK : EXT_FULL, say));
    }
    if (want('claim_complete')) {
      say('claim_task + complete_task over Streamable HTTP, 10 agents…');
      results.claim_complete_per_s = await benchClaimComplete(
        dir,
        options.quick ? { tasks: 100, rounds: 3, warmup: 50 } : { tasks: 1000, rounds: 5, warmup: 500 },
      );
    }
    if (want('sessions')) {
      say('initialize flood over Streamable HTTP by a whoami-only agent (server in a child process)…');
      const flood = options.quick ? 1000 : 5000;
      results.mcp_session_flood_rss_mb = await benchMcpSessionFlood(dir, flood);
    }
    if (want('goals'))
      Object.assign(
        results,
        await benchGoalReads(dir, options.quick ? 10 : 100, options.quick ? 30 : 200, say, options.quick),
      );
    if (want('sse')) {
      say('commit → SSE client of /api/events, one commit at a time…');
      Object.assign(
        results,
        await benchSse(dir, options.quick ? { commits: 100, warmup: 20 } : { commits: 500, warmup: 50 }),
      );
    }
    if (want('replay')) {
      say('replay of 10,000 events and a snapshot…');
      Object.assign(
        results,
        await benchReplay(dir, 10_000, options.quick ? 3 : 7, (app, team, goalId) => {
          say("  the console's time-travel slider on that goal, in chromium…");
          return benchScrub(app, team, goalId, options.quick ? 20 : 60);
        }),
      );
    }
    if (want('reputation')) {
      say('reputation of an agent with 10,000 evidence rows…');
      Object.assign(results, await benchReputation(dir, 10_000, options.quick ? 30 : 200));
    }
    if (want('spawn')) {
      say('propose_agent in auto mode over Streamable HTTP…');
      results.spawn_per_s = await benchSpawn(
        dir,
        options.quick ? { spawns: 30, rounds: 3 } : { spawns: 100, rounds: 5 },
      );
    }
    if (want('runs')) {
      say('runs of `true` through the reactor…');
      const runs = await benchRunOverhead(dir, options.quick ? { runs: 20, rounds: 2 } : { runs: 50, rounds: 4 });
      results.run_overhead_ms = runs.plain;
      if (runs.sandbox) results.run_sandbox_overhead_ms = runs.sandbox;
      else say('  (no sandbox here: run_sandbox_overhead_ms not measured)');
    }
    if (want('budget')) {
      say('runs stopped by their goal budget while they spend…');
      results.budget_stop_ms = await benchBudgetStop(dir, { runs: options.quick ? 5 : 20 });
    }
    if (want('breakers')) {
      say('a command mix (runs, messages, claims and hand-ins, tool calls) with the loop breakers on and off…');
      results.breakers_commands_per_s = await benchBreakers(dir, { steps: options.quick ? 300 : 1000, rounds });
    }
    if (want('runtimes')) {
      // The real CLIs (devDependencies) against the scripted model endpoint; OpenCode starts in ~8 s, so quick leaves it out.
      say('wake → first MCP call of the real agent CLIs, and the adapter overhead per run…');
      const clis = options.quick ? ['claude-code', 'codex'] : ['claude-code', 'codex', 'opencode'];
      const r = await benchRuntimes(dir, { rounds: options.quick ? 2 : 5, clis });
      if (r) {
        for (const [cli, f] of Object.entries(r.firstCall))
          results[`runtime_first_call_ms_${cli.replace('-', '_')}`] = f;
        results.runtime_adapter_overhead_ms = r.adapterOverhead;
      } else say('  (no sandbox here: the runtime figures not measured)');
    }
    if (want('apps')) {
      say('a static web app file under /apps, against a bare file server…');
      results.apps_static_per_s = (await benchApps(dir, { seconds: options.quick ? 3 : 8 })).staticPerS;
    }
    if (want('cli')) {
      say('colony --version and goals list: the bundled CLI against its sources through tsx…');
      Object.assign(results, benchCliStart(dir, options.quick ? 5 : 11));
    }
    if (want('demo')) {
      say('the doc-gardener demo end to end…');
      results.demo_s = await benchDemo(dir);
    }
    if (want('rebuild')) {
      const events = options.quick ? 100_000 : 1_000_000;
      say(`seeding ${events.toLocaleString('en-US')} events, then rebuild and verify…`);
      Object.assign(results, benchRebuild(dir, events));
    }
    if (want('evidence')) {
      say('signed evidence: append with the Merkle tree, export and verify of a goal bundle…');
      Object.assign(results, await benchEvidence(dir, { quick: options.quick }, say));
    }
    // Last: its big stores' seeding garbage would land on the in-process figures above.
    if (want('flat')) Object.assign(results, benchFlat(dir, options.quick ? FLAT_QUICK : FLAT_FULL, say));
    if (want('postgres')) {
      if (options.pgUrl) {
        say('commands on PostgreSQL with 1, 2 and 4 nodes against pgbench -N…');
        const timing = options.quick ? { seconds: 2, rounds: 1 } : { seconds: 5, rounds: 3 };
        Object.assign(results, await benchPostgres(options.pgUrl, timing, say));
        say('read models on PostgreSQL: rebuild against SQLite, appends with and without…');
        const size = options.quick ? { cards: 500, appends: 300 } : { cards: 3000, appends: 2000 };
        Object.assign(results, await benchPgReadModels(options.pgUrl, size, say));
        say("how long a node holds its tenant's lock per write, one round trip against lock first…");
        Object.assign(results, await benchPgLock(options.pgUrl, options.quick ? 100 : 300, say));
        say('MCP calls through colony serve nodes on PostgreSQL (autocannon) against one on SQLite…');
        const load = options.quick ? { seconds: 2, rounds: 1, warmup: 1 } : { seconds: 4, rounds: 3, warmup: 2 };
        Object.assign(results, await benchPgServe(options.pgUrl, dir, load, say));
        say('colony serve nodes starting on big PostgreSQL tenants (resuming their copy) against serve on SQLite…');
        const sizes = options.quick ? [100_000] : [100_000, 1_000_000];
        Object.assign(results, await benchPgStart(options.pgUrl, dir, { sizes, rounds: options.quick ? 1 : 3 }, say));
      } else say('postgres: skipped (no server: pass --store postgres://… or set COLONY_TEST_PG)');
    }
  } finally {
    cleanup();
  }
  if (options.json) process.stdout.write(`${JSON.stringify(results)}\n`);
  else process.stdout.write(table(results));
  return results;
}

/** goal_snapshot and goals_list share one store of `goals` goals × 1,000 tasks, built first (not measured). */
async function benchGoalReads(
  dir: string,
  goals: number,
  runs: number,
  say: (s: string) => void,
  quick = false,
): Promise<Record<string, Figure>> {
  say(`seeding ${goals} goals × 1,000 tasks through the goal and task commands…`);
  const app = openApp({ dataDir: join(dir, 'goals') });
  try {
    const team = createTeam(app, 10, ['claim_task', 'complete_task', 'report_usage']);
    let goalId = 0;
    const took = seconds(() => {
      goalId = seedGoals(app, team, goals);
    });
    say(`  seeded ${app.engine.head().position.toLocaleString('en-US')} events in ${took.toFixed(1)} s; goalSnapshot…`);
    const snapshot = await benchGoalSnapshot(app.engine.db, goalId, goals, runs);
    say('  GET /api/goals…');
    const list = await benchGoalsList(app, team.ownerToken, goals, runs);
    say('  the console in chromium: /goals and a live goal…');
    const goalsPage = await benchConsole(app, team, goals, quick ? 5 : 15);
    say('  the console in chromium: "Needs you" with 50 pending items, and a decision seen in two tabs…');
    const needs = await benchConsoleNeeds(app, team, goalId, {
      goals,
      runs: quick ? 5 : 15,
      decisions: quick ? 5 : 20,
    });
    return { ...snapshot, ...list, ...goalsPage, ...needs };
  } finally {
    app.engine.close();
  }
}

function table(results: Record<string, Figure>): string {
  const rows = Object.entries(results).map(([name, f]) => [
    name,
    `${f.value.toLocaleString('en-US')} ${f.unit}`,
    `${f.baseline.toLocaleString('en-US')}`,
    f.ratio.toFixed(3),
    BASELINES[name] ?? '',
    TARGETS[name] ?? '',
    f.data ?? '',
  ]);
  const head = ['benchmark', 'value', 'baseline', 'ratio', 'baseline is', 'target', 'data'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    `${cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd()}\n`;
  return line(head) + line(widths.map((w) => '-'.repeat(w))) + rows.map(line).join('');
}
