import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import type { DemoResult } from '../demo/run.js';
import { action, CliError, printJson } from './shared.js';
import { oneLine } from '../terminal.js';

/** `colony demo`: the doc-gardener example end to end on a temporary data dir (examples/doc-gardener/README.md). */
export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description(
      'run the doc-gardener example end to end: scripted agents check the CLI docs (docs/cli.md) against `colony --help` on a fresh temporary data dir (auto-approve), then write the HTML report',
    )
    .option('--out <file>', 'where to write the HTML report', 'doc-gardener-report.html')
    .option('--keep', 'keep the temporary data dir and print its path (default: deleted at the end)')
    .option('--timeout <sec>', 'give up when the goal has not closed after this many seconds', '150')
    .option('--json', 'print the summary as JSON')
    .action(
      action(async (opts: { out: string; keep?: boolean; timeout: string; json?: boolean }) => {
        if (!opts.out.trim()) throw new CliError('--out must not be empty');
        // Checked first: the report is written at the end, after a run of a minute or more.
        const out = resolve(opts.out);
        if (!existsSync(dirname(out)))
          throw new CliError(`--out ${opts.out}: the directory ${dirname(out)} does not exist`);
        const timeoutSec = Number(opts.timeout);
        if (!Number.isInteger(timeoutSec) || timeoutSec < 1)
          throw new CliError(`--timeout must be a whole number of seconds ≥ 1, not "${opts.timeout}"`);
        // On stderr, which has no guard (progress bars draw there): the lines quote agents' notices and reasons.
        const progress = opts.json ? undefined : (line: string) => process.stderr.write(`  ${oneLine(line)}\n`);
        const { DemoError, runDemo } = await import('../demo/run.js');
        let result: DemoResult;
        try {
          result = await runDemo({ out, keep: opts.keep === true, timeoutSec, progress });
        } catch (e) {
          if (e instanceof DemoError) throw new CliError(`demo failed: ${e.message}`);
          throw e;
        }
        if (opts.json)
          printJson({
            report: result.reportPath,
            data_dir: result.kept ? result.dataDir : null,
            wall_ms: result.wallMs,
            ...result.summary,
          });
        else process.stdout.write(text(result));
        if (!result.summary.sc003.ok)
          throw new CliError(`the report misses SC-003: ${result.summary.sc003.failed.join('; ')}`);
      }),
    );
}

function text(r: DemoResult): string {
  const s = r.summary;
  const pairs = (o: Record<string, number>) =>
    Object.entries(o)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
  return [
    `Report: ${r.reportPath}`,
    `Goal #${s.goal.id} "${oneLine(s.goal.title)}": ${s.goal.status}${s.goal.summary ? ` — ${oneLine(s.goal.summary)}` : ''}`,
    `Tasks: ${s.tasks.total} (${pairs(s.tasks.by_status)})`,
    `Agents spawned by ${s.agents.coordinator}: ${s.agents.spawned.join(', ') || 'none'}`,
    `Runs: ${s.runs.total} (${pairs(s.runs.by_agent)})`,
    `Cost: ${s.cost.tokens} tokens, ${s.cost.cents}¢ — by billing code: ${s.cost.by_billing_code.map((c) => `${oneLine(c.billing_code)} ${c.tokens} tokens ${c.cents}¢`).join(', ')}`,
    `Findings (docs/cli.md vs colony --help): ${s.findings ?? 'none reported'}`,
    `Timeline: ${s.events} events, ${s.artifacts} artifacts. SC-003: ${s.sc003.ok ? 'ok' : `missing ${s.sc003.failed.join('; ')}`}`,
    `Took ${(r.wallMs / 1000).toFixed(1)} s. ${r.kept ? `Data dir kept: ${r.dataDir}` : 'Data dir deleted (--keep keeps it).'}`,
    '',
  ].join('\n');
}
