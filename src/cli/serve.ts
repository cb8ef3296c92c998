import type { Command } from 'commander';
import { parsePort } from '../config.js';
import type { Runtime } from '../runtime/index.js';
import { mcpJsonSnippet } from './mcp-config.js';
import { action, checkOwnerName, formatRate, globals, progressBar } from './shared.js';

/** Shared with `colony stdio`: the override of the start-up chain check (src/chain-check.ts). */
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
    .action(
      action(async (opts: { host: string; port?: string; owner: string; acceptBrokenChain?: boolean }, cmd: Command) => {
        const { dataDir, durability } = globals(cmd);
        const port = parsePort(opts.port);
        checkOwnerName(opts.owner);
        const { openCheckedApp, createOwner, ownerOf, createHttpApp, listen, log, createMcpContext, buildToolRegistry, startRuntime, setServedUrl } = await loadServer();
        const checking = progressBar('checking the chain');
        const bar = progressBar('rebuilding projections');
        const { app, rebuild: r } = openCheckedApp({
          dataDir, durability, rebuild: { onProgress: bar.update }, command: 'serve', acceptBroken: opts.acceptBrokenChain === true,
          onProgress: checking.update, checked: checking.stop, say: (line) => process.stderr.write(`${line}\n`),
        });
        bar.stop();
        if (r && r.events > 0) log.info({ ...r }, `rebuilt ${r.projections.join(', ')}: ${r.events} events, ${formatRate(r.eventsPerSecond)} events/s`);
        const fresh = ownerOf(app) ? null : createOwner(app, opts.owner, { actor: 'system' });
        const mcp = createMcpContext(app, buildToolRegistry());
        const http = createHttpApp(app.engine, mcp, opts.host);
        let runtime: Runtime | null = null;
        try {
          const server = await listen(http.app, opts.host, port);
          const address = server.address();
          const bound = typeof address === 'object' && address ? address.port : port;
          const url = `http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${bound}`;
          setServedUrl(loopbackOf(opts.host, bound));
          runtime = startRuntime(app, { mcpUrl: `${loopbackOf(opts.host, bound)}/mcp` });
          mcp.runtime.reactor = runtime.reactor;
          if (fresh) process.stderr.write(`Initialized ${dataDir}. Owner "${opts.owner}" token (shown once, keep it): ${fresh.token}\n`);
          process.stderr.write(`Colony listening on ${url} (data: ${dataDir})\n`);
          process.stderr.write(`Connect an MCP client with this .mcp.json (export COLONY_TOKEN first):\n${mcpJsonSnippet(`${url}/mcp`, dataDir)}\n`);
          const stop = (signal: string) => {
            log.info({ signal }, 'shutting down');
            runtime?.stop();
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
          mcp.audit.close();
          app.engine.close();
          throw e;
        }
      }),
    );
}

/** What serving needs (the app, HTTP, MCP, the runtime), loaded only when `serve` runs. */
async function loadServer() {
  const [check, principals, http, log, context, tools, runtime, publicUrl] = await Promise.all([
    import('../chain-check.js'), import('../actions/principals.js'), import('../http/server.js'), import('../log.js'),
    import('../mcp/context.js'), import('../mcp/tools/index.js'), import('../runtime/index.js'), import('../public-url.js'),
  ]);
  return {
    openCheckedApp: check.openCheckedApp, createOwner: principals.createOwner, ownerOf: principals.ownerOf, createHttpApp: http.createHttpApp, listen: http.listen,
    log: log.log, createMcpContext: context.createMcpContext, buildToolRegistry: tools.buildToolRegistry, startRuntime: runtime.startRuntime,
    setServedUrl: publicUrl.setServedUrl,
  };
}

/** The URL agents started on this machine call back on: loopback when the server listens on every interface. */
function loopbackOf(host: string, port: number): string {
  const h = host === '0.0.0.0' || host === '::' || host === '' ? '127.0.0.1' : host;
  return `http://${h.includes(':') ? `[${h}]` : h}:${port}`;
}
