import { closeSync, openSync, writeSync } from 'node:fs';
import type { Command } from 'commander';
import { parsePositiveInt } from '../config.js';
import type { AuditLog, AuditRow, Outcome } from '../mcp/audit.js';
import { action, CliError, globals, requireInitialized } from './shared.js';
import { oneLine } from '../terminal.js';

/** `colony audit tail|export`: the trail of MCP tool calls (audit.db, apart from the event log). */
const OUTCOMES: readonly Outcome[] = ['success', 'error', 'blocked', 'pending_confirmation'];

interface TailOptions {
  tool?: string;
  principal?: string;
  principalId?: string;
  tenant?: string;
  status?: string;
  limit: string;
  json?: boolean;
}

export function registerAudit(program: Command): void {
  const audit = program.command('audit').description('the audit trail of MCP tool calls');
  registerTail(audit);
  registerExport(audit);
}

function registerTail(audit: Command): void {
  audit
    .command('tail')
    .description('print the last audit rows')
    .option('--tool <name>', 'only this tool')
    .option(
      '--principal <p>',
      'only this principal name, e.g. agent:reviewer or user:owner (names repeat across tenants)',
    )
    .option('--principal-id <id>', 'only this principal, by id: agent:<id> or user:<id>')
    .option('--tenant <userId>', 'only principals of this tenant (the owning user id)')
    .option('--status <outcome>', `only this outcome: ${OUTCOMES.join(' | ')}`)
    .option('-n, --limit <n>', 'how many', '20')
    .option('--json', 'one JSON object per row (NDJSON)')
    .action(
      action((opts: TailOptions, cmd: Command) => {
        if (opts.status && !OUTCOMES.includes(opts.status as Outcome))
          throw new CliError(`--status must be one of ${OUTCOMES.join(', ')}, not "${opts.status}"`);
        if (opts.principalId && !/^(agent|user):[1-9][0-9]*$/.test(opts.principalId)) {
          throw new CliError(`--principal-id must be agent:<id> or user:<id>, not "${opts.principalId}"`);
        }
        const tenantId = opts.tenant === undefined ? undefined : parsePositiveInt('--tenant', opts.tenant, 0);
        const limit = parsePositiveInt('--limit', opts.limit, 20);
        return withAudit(cmd, (log) => {
          const filter = {
            tool: opts.tool,
            principal: opts.principal,
            principalId: opts.principalId,
            tenantId,
            outcome: opts.status as Outcome | undefined,
            limit,
          };
          const rows = log.query(filter);
          for (const r of rows) process.stdout.write(`${opts.json ? JSON.stringify(r) : line(r)}\n`);
        });
      }),
    );
}

function registerExport(audit: Command): void {
  audit
    .command('export')
    .description('write the whole audit trail as JSON lines')
    .requiredOption('--out <file>', 'the file to write')
    .action(
      action(async (opts: { out: string }, cmd: Command) => {
        const written = await withAudit(cmd, (log) => {
          const fd = openExclusive(opts.out);
          let count = 0;
          try {
            for (
              let after = 0, page = log.query({ after, limit: 1000 });
              page.length > 0;
              page = log.query({ after, limit: 1000 })
            ) {
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
      }),
    );
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

// The tool name is whatever the caller sent (an unknown tool is audited too). The principal's name, then
// who it was (`agent:worker (agent:7, tenant 1)`): names repeat across tenants. Older rows show the name alone.
const line = (r: AuditRow): string =>
  `${String(r.id).padStart(6)}  ${r.at}  ${r.principal}${r.principalId ? ` (${r.principalId}, tenant ${r.tenantId})` : ''}  ${oneLine(r.tool)}  ${r.outcome}${r.errorCode ? ` ${oneLine(r.errorCode)}` : ''}  ${r.durationMs} ms`;

/** An existing file is never overwritten. */
function openExclusive(file: string): number {
  try {
    return openSync(file, 'wx', 0o600);
  } catch (e) {
    throw new CliError(`cannot write ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}
