import type { Command } from 'commander';
import { action, globals, requireInitialized } from './shared.js';

/** `colony stdio`: MCP over stdin/stdout for one principal (token in COLONY_TOKEN). */
export function registerStdio(program: Command): void {
  program
    .command('stdio')
    .description('serve MCP over stdio for the principal whose token is in $COLONY_TOKEN (stdout carries only the protocol)')
    .action(
      action(async (_opts: unknown, cmd: Command) => {
        const { dataDir, durability } = globals(cmd);
        requireInitialized(dataDir);
        const [{ openApp }, { createMcpContext }, { serveStdio }, { buildToolRegistry }, { startRuntime }] = await Promise.all([
          import('../app.js'), import('../mcp/context.js'), import('../mcp/stdio.js'), import('../mcp/tools/index.js'), import('../runtime/index.js'),
        ]);
        const app = openApp({ dataDir, durability });
        // Over stdio the client started this process in its own working directory: task_create infers the project from it.
        const mcp = createMcpContext(app, buildToolRegistry(), { cwd: process.cwd() });
        const runtime = startRuntime(app);
        try {
          await serveStdio(mcp, process.env.COLONY_TOKEN);
        } finally {
          runtime.stop();
          mcp.audit.close();
          app.engine.close();
        }
      }),
    );
}
