import type { Command } from 'commander';
import type { AppOptions } from '../app.js';
import { goalStallSec, parsePort } from '../config.js';
import { announceRuntimeChecks, announceSandbox, announceServing } from './serve-notices.js';
import { startJobs, type Jobs } from './serve-jobs.js';
import { claimForServe, type Claim } from './serve-claim.js';
import {
  ACCEPT_HELP,
  checkpointSettings,
  SANDBOX_HELP,
  sandboxSwitch,
  type CheckpointSettings,
  type ServeOptions,
} from './serve-options.js';
import { action, appStore, checkOwnerName, formatRate, globals, progressBar } from './shared.js';
import { gatherPerTurn } from '../log.js';

/**
 * `colony serve`: HTTP (`/health`, `/mcp`). On a fresh data dir it initializes and prints the owner token once.
 * Before it writes anything it claims its port and the data dir's lock (serve-claim.ts: one serve per data dir).
 * It first checks the log's tail from the last verified anchor and refuses a broken chain (--accept-broken-chain).
 */
export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('serve Colony over HTTP (default 127.0.0.1:7070); initializes a fresh data dir')
    .option('--host <host>', 'address to bind', process.env.COLONY_HOST ?? '127.0.0.1')
    .option('--port <port>', 'port to listen on (0 = any free port)', process.env.COLONY_PORT)
    .option('--owner <name>', 'owner name when initializing a fresh data dir', 'owner')
    .option('--accept-broken-chain', ACCEPT_HELP)
    .option('--sandbox <on|off>', SANDBOX_HELP, process.env.COLONY_SANDBOX ?? 'on')
    .option(
      '--checkpoint-events <n>',
      'sign a checkpoint of the log whenever it has grown by this many events (0: never; $COLONY_CHECKPOINT_EVENTS; default 1000)',
      process.env.COLONY_CHECKPOINT_EVENTS,
    )
    .option(
      '--checkpoint-minutes <m>',
      'and after this many minutes when it has grown at all (0: never; $COLONY_CHECKPOINT_MINUTES; default 10)',
      process.env.COLONY_CHECKPOINT_MINUTES,
    )
    .option(
      '--auto-approve',
      'approve every task-tree and agent proposal in your goals as soon as it is made (for unattended demos; only your verifier recipes ever run)',
    )
    .action(action(serve));
}

type Loaded = Awaited<ReturnType<typeof loadServer>>;

/** What serve decided before it opened anything: where, how, and what it claimed (serve-claim.ts). */
interface Setup {
  where: Required<Pick<AppOptions, 'dataDir' | 'durability' | 'store'>>;
  port: number;
  sandbox: 'on' | 'off';
  checkpoints: CheckpointSettings;
  claim: Claim;
}

async function serve(opts: ServeOptions, cmd: Command): Promise<void> {
  const { dataDir, durability } = globals(cmd);
  const store = appStore(globals(cmd));
  const port = parsePort(opts.port);
  const sandbox = sandboxSwitch(opts.sandbox);
  const checkpoints = checkpointSettings(opts);
  await ensureConsoleBuilt();
  checkOwnerName(opts.owner);
  goalStallSec(); // a bad COLONY_GOAL_STALL_SEC is refused before anything is written
  const claim = await claimForServe(dataDir, opts.host, port, store === null);
  try {
    await serveClaimed(opts, { where: { dataDir, durability, store }, port, sandbox, checkpoints, claim });
  } catch (e) {
    await claim.freePort();
    claim.lock?.release();
    throw e;
  }
}

async function serveClaimed(opts: ServeOptions, { where, port, sandbox, checkpoints, claim }: Setup): Promise<void> {
  const { dataDir, durability, store } = where;
  const s = await loadServer();
  const app = openServed(s, where, opts.acceptBrokenChain === true);
  const fresh = s.ownerOf(app) ? null : s.createOwner(app, opts.owner, { actor: 'system' });
  const mcp = s.createMcpContext(app, s.buildToolRegistry(), { logCalls: true });
  let jobs: Jobs | null = null;
  mcp.node.follow = () => jobs?.problem() ?? null;
  const http = s.createHttpApp(app.engine, mcp, opts.host);
  try {
    await claim.freePort();
    const server = await s.listen(http.app, opts.host, port);
    const address = server.address();
    const bound = typeof address === 'object' && address ? address.port : port;
    const url = `http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${bound}`;
    s.setServedUrl(loopbackOf(opts.host, bound));
    const startRuntime = () =>
      s.startRuntime(app, {
        mcpUrl: `${loopbackOf(opts.host, bound)}/mcp`,
        sandbox,
        activityLog: true,
        autoApprove: opts.autoApprove ? { ownerId: s.ownerOf(app)!.userId } : undefined,
      });
    await announceSandbox(sandbox);
    jobs = await startJobs(app, store, mcp, startRuntime, () =>
      s.startAutoCheckpoints(app.engine, dataDir, { ...checkpoints, durability }),
    );
    const stop = (signal: string) => {
      s.log.info({ signal }, 'shutting down');
      jobs?.stop();
      void http.close().finally(() => {
        server.close(() => {
          mcp.audit.close();
          app.engine.close();
          claim.lock?.release();
        });
        server.closeAllConnections();
      });
    };
    // Before the 'listening' line: whoever reads it may stop us at once, and a signal with no handler yet kills.
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
    announceServing({
      url,
      dataDir,
      owner: opts.owner,
      freshToken: fresh ? fresh.token : null,
      agentCommand: s.ownerOf(app)!.agentCommand,
      agentRuntime: s.ownerOf(app)!.agentRuntime,
      checkpoints,
      autoApprove: opts.autoApprove === true,
    });
    gatherPerTurn(); // serving: info lines go out once per turn (log.ts)
    void announceRuntimeChecks(app, s.ownerOf(app)!.userId, sandbox).catch(() => undefined);
  } catch (e) {
    jobs?.stop();
    mcp.audit.close();
    app.engine.close();
    throw e;
  }
}

/** The app, once the start-up chain check passed (or its break was accepted) and the projections are rebuilt. */
function openServed(s: Loaded, where: Pick<AppOptions, 'dataDir' | 'durability' | 'store'>, acceptBroken: boolean) {
  const checking = progressBar('checking the chain');
  const bar = progressBar('rebuilding projections');
  const { app, rebuild: r } = s.openCheckedApp({
    ...where,
    rebuild: { onProgress: bar.update },
    command: 'serve',
    acceptBroken,
    onProgress: checking.update,
    checked: checking.stop,
    say: (line) => process.stderr.write(`${line}\n`),
  });
  bar.stop();
  if (r && r.events > 0)
    s.log.info(
      { ...r },
      `rebuilt ${r.projections.join(', ')}: ${r.events} events, ${formatRate(r.eventsPerSecond)} events/s`,
    );
  return app;
}

/** The console is built by `npm install` (prepare); an install that skipped scripts gets it built on the first start instead. */
async function ensureConsoleBuilt(): Promise<void> {
  const [{ existsSync }, { join }, { WEB_DIST }] = await Promise.all([
    import('node:fs'),
    import('node:path'),
    import('../http/web.js'),
  ]);
  if (existsSync(join(WEB_DIST, 'index.html'))) return;
  process.stderr.write('Building the console (web/) once…\n');
  try {
    const { build } = await import('vite');
    await build({ configFile: join(WEB_DIST, '..', 'vite.config.ts'), logLevel: 'warn' });
  } catch (e) {
    process.stderr.write(
      `The console could not be built (${(e as Error).message.split('\n')[0]}): / answers 503 until \`npm run build:web\` succeeds.\n`,
    );
  }
}

/** What serving needs (the app, HTTP, MCP, the runtime), loaded only when `serve` runs. */
async function loadServer() {
  const [check, principals, http, log, context, tools, runtime, publicUrl, checkpoints] = await Promise.all([
    import('../evidence/chain-check.js'),
    import('../actions/principals.js'),
    import('../http/server.js'),
    import('../log.js'),
    import('../mcp/context.js'),
    import('../mcp/tools/index.js'),
    import('../runtime/index.js'),
    import('../public-url.js'),
    import('../evidence/auto-checkpoint.js'),
  ]);
  return {
    openCheckedApp: check.openCheckedApp,
    createOwner: principals.createOwner,
    ownerOf: principals.ownerOf,
    createHttpApp: http.createHttpApp,
    listen: http.listen,
    log: log.log,
    createMcpContext: context.createMcpContext,
    buildToolRegistry: tools.buildToolRegistry,
    startRuntime: runtime.startRuntime,
    setServedUrl: publicUrl.setServedUrl,
    startAutoCheckpoints: checkpoints.startAutoCheckpoints,
  };
}

/** The URL agents started on this machine call back on: loopback when the server listens on every interface. */
function loopbackOf(host: string, port: number): string {
  const h = host === '0.0.0.0' || host === '::' || host === '' ? '127.0.0.1' : host;
  return `http://${h.includes(':') ? `[${h}]` : h}:${port}`;
}
