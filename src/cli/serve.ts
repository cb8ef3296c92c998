import type { Command } from 'commander';
import { openEngine } from '../app.js';
import { isInitialized, parsePort } from '../config.js';
import { createHttpApp, listen } from '../http/server.js';
import { log } from '../log.js';
import { action, formatRate, globals, progressBar } from './shared.js';

/** `colony serve`: the HTTP server (initializing a fresh data dir first). */
export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('serve Colony over HTTP (default 127.0.0.1:7070); initializes a fresh data dir')
    .option('--host <host>', 'address to bind', process.env.COLONY_HOST ?? '127.0.0.1')
    .option('--port <port>', 'port to listen on (0 = any free port)', process.env.COLONY_PORT)
    .action(
      action(async (opts: { host: string; port?: string }, cmd: Command) => {
        const { dataDir, durability } = globals(cmd);
        const port = parsePort(opts.port);
        const fresh = !isInitialized(dataDir);
        const bar = progressBar('rebuilding projections');
        const engine = openEngine({ dataDir, durability, rebuild: { onProgress: bar.update } });
        bar.stop();
        if (engine.startupRebuild && engine.startupRebuild.events > 0) {
          const r = engine.startupRebuild;
          log.info({ ...r }, `rebuilt ${r.projections.join(', ')}: ${r.events} events, ${formatRate(r.eventsPerSecond)} events/s`);
        }
        try {
          const server = await listen(createHttpApp(engine), opts.host, port);
          const address = server.address();
          const bound = typeof address === 'object' && address ? address.port : port;
          process.stderr.write(`Colony ${fresh ? 'initialized and ' : ''}listening on http://${opts.host}:${bound} (data: ${dataDir})\n`);
          const stop = (signal: string) => {
            log.info({ signal }, 'shutting down');
            server.close(() => engine.close());
            server.closeAllConnections();
          };
          process.once('SIGINT', () => stop('SIGINT'));
          process.once('SIGTERM', () => stop('SIGTERM'));
        } catch (e) {
          engine.close();
          throw e;
        }
      }),
    );
}
