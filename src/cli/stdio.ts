import type { Command } from 'commander';
import { ACCEPT_HELP, SANDBOX_HELP, sandboxSwitch } from './serve-options.js';
import { startJobs } from './serve-jobs.js';
import { holdOrFollow } from './stdio-jobs.js';
import { oneLine } from '../terminal.js';
import { action, appStore, globals, requireInitialized } from './shared.js';
import { gatherPerTurn } from '../log.js';

/** `colony stdio`: MCP over stdin/stdout for one principal (token in COLONY_TOKEN). */
export function registerStdio(program: Command): void {
  program
    .command('stdio')
    .description(
      'serve MCP over stdio for the principal whose token is in $COLONY_TOKEN (stdout carries only the protocol)',
    )
    .option('--accept-broken-chain', ACCEPT_HELP)
    .option('--sandbox <on|off>', SANDBOX_HELP, process.env.COLONY_SANDBOX ?? 'on')
    .action(
      action(async (opts: { acceptBrokenChain?: boolean; sandbox: string }, cmd: Command) => {
        const g = globals(cmd);
        const { dataDir, durability } = g;
        const sandbox = sandboxSwitch(opts.sandbox);
        requireInitialized(dataDir, g.store);
        const [{ openCheckedApp }, { createMcpContext }, { serveStdio }, { buildToolRegistry }, { startRuntime }] =
          await Promise.all([
            import('../evidence/chain-check.js'),
            import('../mcp/context.js'),
            import('../mcp/stdio.js'),
            import('../mcp/tools/index.js'),
            import('../runtime/index.js'),
          ]);
        // The same start-up chain check as serve's; its lines go to stderr (stdout carries only the protocol).
        const { app } = openCheckedApp({
          dataDir,
          durability,
          store: appStore(g),
          command: 'stdio',
          acceptBroken: opts.acceptBrokenChain === true,
          say: (line) => process.stderr.write(`${line}\n`),
        });
        // Over stdio the client started this process in its own working directory: task_create infers the project from it.
        const mcp = createMcpContext(app, buildToolRegistry(), { cwd: process.cwd() });
        // stdio runs no agents, but command verifiers: confined the same way (refusals and opt-outs said on stderr).
        // On a PostgreSQL store only while it leads the tenant, as a serve node (cli/serve-jobs.ts); on SQLite
        // only while it holds the data dir's lock (cli/stdio-jobs.ts), so nothing runs twice.
        const noCheckpoints = () => ({ stop: () => Promise.resolve() });
        const start = () => startJobs(app, appStore(g), mcp, () => startRuntime(app, { sandbox }), noCheckpoints);
        const say = (line: string) => process.stderr.write(`colony: ${oneLine(line)}\n`);
        const jobs = g.store === null ? await holdOrFollow(dataDir, start, say) : await start();
        // On a PostgreSQL store its follower can fail as a serve node's can: system_health says so here too.
        mcp.node.follow = () => jobs.problem();
        if (sandbox === 'off')
          process.stderr.write('WARNING: --sandbox off: command verifiers run UNCONFINED; every verdict records it.\n');
        try {
          gatherPerTurn(); // serving: info lines go out once per turn (log.ts)
          await serveStdio(mcp, process.env.COLONY_TOKEN);
        } finally {
          jobs.stop();
          mcp.audit.close();
          app.engine.close();
        }
      }),
    );
}
