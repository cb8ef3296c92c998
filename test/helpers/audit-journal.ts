import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { AuditEntry } from '../../src/mcp/audit.js';
import { JOURNAL_DIR } from '../../src/mcp/audit-journal.js';

/** The audit journal's segment files of a data dir, relative to it, for the tests that scan every stored byte. */
export const auditJournal = (dataDir: string): string[] =>
  existsSync(join(dataDir, JOURNAL_DIR))
    ? readdirSync(join(dataDir, JOURNAL_DIR))
        .filter((n) => n.endsWith('.jsonl'))
        .map((n) => join(JOURNAL_DIR, n))
    : [];

/** A whoami row of agent 1 with this command id, for the journal's tests and their writer process. */
export const auditEntry = (commandId: string, principal = 'agent:me'): AuditEntry => ({
  at: '2026-01-01T00:00:00.000Z',
  principal,
  principalId: 'agent:1',
  tenantId: 1,
  tool: 'whoami',
  argsDigest: 'd',
  outcome: 'success',
  errorCode: null,
  durationMs: 1,
  commandId,
});
