import type { Command } from 'commander';
import { withOwner } from './owner.js';
import { action, CliError, printJson } from './shared.js';
import { oneLine } from '../terminal.js';

/**
 * `colony doctor`: checks every agent CLI runtime the owner's agents use (runtime/doctor.ts) — its binary,
 * that it runs inside the sandbox, and per agent its model, credentials and network — and exits 1 when
 * any check fails, printing the fix. `serve` runs the same checks when it starts.
 */
export function registerDoctor(program: Command): void {
  program
    .command('doctor')
    .description(
      "check every agent runtime: its CLI, that it runs in the sandbox, each agent's model, credentials and network",
    )
    .option('--json', 'print the checks as JSON')
    .action(
      action((opts: { json?: boolean }, cmd: Command) =>
        withOwner(cmd, async (app, owner) => {
          const [{ doctorRuntimes }, { sandboxDefault }] = await Promise.all([
            import('../runtime/doctor.js'),
            import('../runtime/confine.js'),
          ]);
          const checks = await doctorRuntimes(app, owner.userId, sandboxDefault());
          const failed = checks.filter((c) => !c.ok).length;
          if (opts.json) printJson({ ok: failed === 0, checks });
          else if (checks.length === 0)
            process.stdout.write(
              'No agent runs under an agent CLI runtime: nothing to check (colony config set agent-runtime claude-code|codex|opencode).\n',
            );
          else
            process.stdout.write(
              `${checks
                .map(
                  (c) =>
                    `${c.ok ? 'ok  ' : 'FAIL'} ${c.runtime}${c.agent ? ` ${c.agent}` : ''} ${c.check}: ${oneLine(c.detail)}`,
                )
                .join('\n')}\n`,
            );
          if (failed > 0) throw new CliError(`${failed} check(s) failed`);
        }),
      ),
    );
}
