import { closeSync, openSync, writeSync } from 'node:fs';
import type { Command } from 'commander';
import { parsePositiveInt } from '../config.js';
import type { AuditLog, AuditRow, Outcome } from '../mcp/audit.js';
import { action, CliError, globals, requireInitialized } from './shared.js';
import { oneLine } from './terminal.js';

/** `colony audit tail|export`: the trail of MCP tool calls (audit.db, apart from the event log). */
const OUTCOMES: readonly Outcome[] = ['success', 'error', 'blocked', 'pending_confirmation'];

export function registerAudit(program: Command): void {
  const audit = program.command('audit').description('the audit trail of MCP tool calls');
  audit
    .command('tail')
    .description('print the last audit rows')
    .option('--tool <name>', 'only this tool')
    .option('--principal <p>', 'only this principal, e.g. agent:reviewer or user:owner')
    .option('--status <outcome>', `only this outcome: ${OUTCOMES.join(' | ')}`)
    .option('-n, --limit <n>', 'how many', '20')
    .option('--json', 'one JSON object per row (NDJSON)')
    .action(action((opts: { tool?: string; principal?: string; status?: string; limit: string; json?: boolean }, cmd: Command) => {
      if (opts.status && !OUTCOMES.includes(opts.status as Outcome)) throw new CliError(`--status must be one of ${OUTCOMES.join(', ')}, not "${opts.status}"`);
      const limit = parsePositiveInt('--limit', opts.limit, 20);
      return withAudit(cmd, (log) => {
        const rows = log.query({ tool: opts.tool, principal: opts.principal, outcome: opts.status as Outcome | undefined, limit });
        for (const r of rows) process.stdout.write(`${opts.json ? JSON.stringify(r) : line(r)}\n`);
      });
    }));
  audit
    .command('export')
    .description('write the whole audit trail as JSON lines')
    .requiredOption('--out <file>', 'the file to write')
    .action(action(async (opts: { out: string }, cmd: Command) => {
      const written = await withAudit(cmd, (log) => {
        const fd = openExclusive(opts.out);
        let count = 0;
        try {
          for (let after = 0, page = log.query({ after, limit: 1000 }); page.length > 0; page = log.query({ after, limit: 1000 })) {
            writeSync(fd, page.map((r) => `${JSON.stringify(r)}\n`).join(''));
            count += page.length;
            after = page[page.length - 1]!.id;
          }
        } finally {
          closeSync(fd);
        }
        return count;
      });
      process.stdout.write(`exported ${written} audit rows to ${opts.out}\n`);
    }));
}

async function withAudit<T>(cmd: Command, fn: (log: AuditLog) => T | Promise<T>): Promise<T> {
  const { dataDir } = globals(cmd);
  requireInitialized(dataDir);
  const { AuditLog } = await import('../mcp/audit.js');
  const log = AuditLog.open(dataDir);
  try {
    return await fn(log);
  } finally {
    log.close();
  }
}

// The tool name is whatever the caller sent (an unknown tool is audited too).
const line = (r: AuditRow): string =>
  `${String(r.id).padStart(6)}  ${r.at}  ${r.principal}  ${oneLine(r.tool)}  ${r.outcome}${r.errorCode ? ` ${oneLine(r.errorCode)}` : ''}  ${r.durationMs} ms`;

/** An existing file is never overwritten. */
function openExclusive(file: string): number {
  try {
    return openSync(file, 'wx', 0o600);
  } catch (e) {
    throw new CliError(`cannot write ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}
