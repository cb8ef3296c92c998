import type { Command } from 'commander';
import { DEFAULT_CHECKPOINT_EVENTS, DEFAULT_CHECKPOINT_MINUTES, parseCheckpointSetting, parsePort } from '../config.js';
import type { Runtime } from '../runtime/index.js';
import { mcpJsonSnippet } from './mcp-config.js';
import { oneLine } from '../terminal.js';
import { action, checkOwnerName, CliError, formatRate, globals, progressBar } from './shared.js';

/** Shared with `colony stdio`: the override of the start-up chain check (src/evidence/chain-check.ts). */
export const ACCEPT_HELP =
  'start even though the start-up chain check fails: record the break in the log (ChainBreakAccepted), re-anchor the log at its real end and rebuild every projection from it';

/**
 * `colony serve`: HTTP (`/health`, `/mcp`). On a fresh data dir it initializes and prints the owner token once.
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
    .action(
      action(async (opts: ServeOptions, cmd: Command) => {
        const { dataDir, durability } = globals(cmd);
        const port = parsePort(opts.port);
        const sandbox = sandboxSwitch(opts.sandbox);
        const checkpoints = checkpointSettings(opts);
        await ensureConsoleBuilt();
        checkOwnerName(opts.owner);
        const {
          openCheckedApp,
          createOwner,
          ownerOf,
          createHttpApp,
          listen,
          log,
          createMcpContext,
          buildToolRegistry,
          startRuntime,
          setServedUrl,
          startAutoCheckpoints,
        } = await loadServer();
        const checking = progressBar('checking the chain');
        const bar = progressBar('rebuilding projections');
        const { app, rebuild: r } = openCheckedApp({
          dataDir,
          durability,
          rebuild: { onProgress: bar.update },
          command: 'serve',
          acceptBroken: opts.acceptBrokenChain === true,
          onProgress: checking.update,
          checked: checking.stop,
          say: (line) => process.stderr.write(`${line}\n`),
        });
        bar.stop();
        if (r && r.events > 0)
          log.info(
            { ...r },
            `rebuilt ${r.projections.join(', ')}: ${r.events} events, ${formatRate(r.eventsPerSecond)} events/s`,
          );
        const fresh = ownerOf(app) ? null : createOwner(app, opts.owner, { actor: 'system' });
        const mcp = createMcpContext(app, buildToolRegistry(), { logCalls: true });
        const http = createHttpApp(app.engine, mcp, opts.host);
        let runtime: Runtime | null = null;
        let autoCheckpoints: { stop(): Promise<void> } | null = null;
        try {
          const server = await listen(http.app, opts.host, port);
          const address = server.address();
          const bound = typeof address === 'object' && address ? address.port : port;
          const url = `http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${bound}`;
          setServedUrl(loopbackOf(opts.host, bound));
          runtime = startRuntime(app, {
            mcpUrl: `${loopbackOf(opts.host, bound)}/mcp`,
            sandbox,
            activityLog: true,
            autoApprove: opts.autoApprove ? { ownerId: ownerOf(app)!.userId } : undefined,
          });
          await announceSandbox(sandbox);
          mcp.runtime.reactor = runtime.reactor;
          autoCheckpoints = startAutoCheckpoints(app.engine, dataDir, { ...checkpoints, durability });
          if (fresh)
            process.stderr.write(
              `Initialized ${dataDir}. Owner "${opts.owner}" token (shown once, keep it): ${fresh.token}\n`,
            );
          process.stderr.write(`Colony listening on ${url} (data: ${dataDir})\n`);
          process.stderr.write(`Console: ${url}/ (sign in with an owner or agent token)\n`);
          process.stderr.write(
            `Connect an MCP client with this .mcp.json (export COLONY_TOKEN first):\n${mcpJsonSnippet(`${url}/mcp`, dataDir)}\n`,
          );
          process.stderr.write(
            `Clients that sign in with OAuth (hosted connectors, the MCP Inspector) need no token: give them ${url}/mcp and approve them in the console (OAuth apps) or with colony oauth approve CODE.\n`,
          );
          process.stderr.write(`${agentCommandLine(ownerOf(app)!.agentCommand)}\n`);
          process.stderr.write(`${checkpointLine(checkpoints)}\n`);
          if (opts.autoApprove) process.stderr.write(AUTO_APPROVE_WARNING);
          const stop = (signal: string) => {
            log.info({ signal }, 'shutting down');
            runtime?.stop();
            void autoCheckpoints?.stop();
            void http.close().finally(() => {
              server.close(() => {
                mcp.audit.close();
                app.engine.close();
              });
              server.closeAllConnections();
            });
          };
          process.once('SIGINT', () => stop('SIGINT'));
          process.once('SIGTERM', () => stop('SIGTERM'));
        } catch (e) {
          runtime?.stop();
          void autoCheckpoints?.stop();
          mcp.audit.close();
          app.engine.close();
          throw e;
        }
      }),
    );
}

interface ServeOptions {
  host: string;
  port?: string;
  owner: string;
  acceptBrokenChain?: boolean;
  sandbox: string;
  autoApprove?: boolean;
  checkpointEvents?: string;
  checkpointMinutes?: string;
}

function checkpointSettings(opts: ServeOptions): { everyEvents: number; everyMinutes: number } {
  return {
    everyEvents: parseCheckpointSetting('--checkpoint-events', opts.checkpointEvents, DEFAULT_CHECKPOINT_EVENTS),
    everyMinutes: parseCheckpointSetting('--checkpoint-minutes', opts.checkpointMinutes, DEFAULT_CHECKPOINT_MINUTES),
  };
}

function checkpointLine({ everyEvents, everyMinutes }: { everyEvents: number; everyMinutes: number }): string {
  const when = [
    everyEvents > 0 ? `every ${everyEvents} events` : '',
    everyMinutes > 0 ? `every ${everyMinutes} min of activity` : '',
  ]
    .filter(Boolean)
    .join(' and ');
  return when
    ? `Signed checkpoints of the log: ${when} (colony checkpoints list; colony key show for the public key).`
    : 'Signed checkpoints are off (--checkpoint-events 0 --checkpoint-minutes 0): colony checkpoint signs one by hand.';
}

export const AUTO_APPROVE_WARNING =
  'WARNING: --auto-approve: every task-tree and agent proposal in your goals is approved the moment it is made, ' +
  "without you (recorded as approved by system). Only your verifier recipes and your agents' commands ever run, but agents spawn and tasks start unreviewed. For unattended demos.\n";

/** Said once at start: how this team's agents run, or — with no default command — that goals will wait, and how to change it. */
export function agentCommandLine(agentCommand: string | null): string {
  return agentCommand !== null
    ? `Agents run with: ${oneLine(agentCommand)} (the team's agent-command; an agent's own --command wins)`
    : "No agent command is set: Colony starts no coordinator, so a new goal waits in draft for an outside one (an MCP client holding the coordinator's token: colony agents token coordinator). To have Colony run agents: colony config set agent-command CMD (README: Running agents).";
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

export const SANDBOX_HELP =
  'on (the default; $COLONY_SANDBOX): every agent run and command verifier runs in a Bubblewrap sandbox, or is refused where that is impossible; off: they run unconfined (announced, and recorded with every run)';

export function sandboxSwitch(raw: string): 'on' | 'off' {
  if (raw !== 'on' && raw !== 'off') throw new CliError(`--sandbox must be on or off, not "${raw}"`);
  return raw;
}

/** Says at start how processes will run: never a silent fallback (DESIGN §8). */
export async function announceSandbox(sandbox: 'on' | 'off'): Promise<void> {
  if (sandbox === 'off') {
    process.stderr.write(
      'WARNING: --sandbox off: agent runs and command verifiers run UNCONFINED, as this user, with the data directory, the master key and the whole host in reach; every run records it.\n',
    );
    return;
  }
  const { hostSupport } = await import('../runtime/sandbox.js');
  const host = hostSupport();
  process.stderr.write(
    host.ok
      ? `Agent runs and command verifiers run confined (bubblewrap${host.socat ? '' : '; no socat: only network host works'}).\n`
      : `WARNING: confinement is not possible here (${host.reason}): agent runs and command verifiers will be refused until it is, or until you opt out (--sandbox off, or colony agents runtime NAME --sandbox off).\n`,
  );
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
