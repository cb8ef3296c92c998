import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { registerAgents } from './cli/agents.js';
import { registerAgentRuntime } from './cli/agent-runtime.js';
import { registerRuns } from './cli/runs.js';
import { registerAudit } from './cli/audit.js';
import { registerBench } from './cli/bench.js';
import { registerCheckpoint } from './cli/checkpoint.js';
import { registerConfig } from './cli/config.js';
import { registerDoctor } from './cli/doctor.js';
import { registerDemo } from './cli/demo.js';
import { registerEvents } from './cli/events.js';
import { registerExport } from './cli/export.js';
import { registerFork } from './cli/fork.js';
import { registerGoals } from './cli/goals.js';
import { registerTasks } from './cli/tasks.js';
import { registerInit } from './cli/init.js';
import { registerKey } from './cli/key.js';
import { registerOAuth } from './cli/oauth.js';
import { registerProposals } from './cli/proposals.js';
import { registerRebuild } from './cli/rebuild.js';
import { registerReport } from './cli/report.js';
import { registerRequests } from './cli/requests.js';
import { registerSecrets } from './cli/secrets.js';
import { registerServe } from './cli/serve.js';
import { registerStdio } from './cli/stdio.js';
import { guardOutput, terminalSafe } from './terminal.js';
import { checkStoreSupported, endQuietlyWhenOutputCloses } from './cli/shared.js';
import { registerToken } from './cli/token.js';
import { registerVerify } from './cli/verify.js';
import { registerVerifyBundle } from './cli/verify-bundle.js';
import { registerVerifiers } from './cli/verifiers.js';
import { registerMigrate } from './cli/migrate.js';

/** The `colony` command line. Each command lives in src/cli/<command>.ts. */
export function buildProgram(): Command {
  const quietOnClose = endQuietlyWhenOutputCloses();
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  const program = new Command('colony')
    .description('Colony: an event-sourced control plane for teams of AI agents, served over MCP')
    .version(pkg.version)
    .option('--data <dir>', 'data directory (default: $COLONY_DATA or ./.colony)')
    .option('--durability <mode>', 'full (default: survives power loss) or normal (faster; $COLONY_DURABILITY)')
    .option('--store <url>', 'the event store: sqlite (default, in the data dir) or postgres://… ($COLONY_STORE)')
    .configureOutput({ outputError: (text, write) => write(`colony: ${terminalSafe(text.replace(/^error: /, ''))}`) })
    // Agent-written text reaches the output of most commands: every one gets the guard (src/terminal.ts)
    // but `colony stdio`, whose stdout is the MCP protocol for a client, not a terminal.
    .hook('preAction', (_program, command) => {
      if (!(command.parent === program && command.name() === 'stdio')) guardOutput(process.stdout);
      else quietOnClose();
      try {
        checkStoreSupported(command);
      } catch (e) {
        process.stderr.write(`colony: ${terminalSafe((e as Error).message)}\n`);
        process.exit(1);
      }
    });
  registerInit(program);
  registerServe(program);
  registerStdio(program);
  registerToken(program);
  registerConfig(program);
  registerDoctor(program);
  registerAgentRuntime(registerAgents(program));
  registerRuns(program);
  registerGoals(program);
  registerTasks(program);
  registerProposals(program);
  registerSecrets(program);
  registerRequests(program);
  registerOAuth(program);
  registerVerifiers(program);
  registerAudit(program);
  registerVerify(program);
  registerKey(program);
  registerCheckpoint(program);
  registerExport(program);
  registerFork(program);
  registerVerifyBundle(program);
  registerRebuild(program);
  registerMigrate(program);
  registerEvents(program);
  registerBench(program);
  registerReport(program);
  registerDemo(program);
  return program;
}

await buildProgram().parseAsync(process.argv);
