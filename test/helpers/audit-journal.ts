import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { JOURNAL_DIR } from '../../src/mcp/audit-journal.js';

/** The audit journal's segment files of a data dir, relative to it, for the tests that scan every stored byte. */
export const auditJournal = (dataDir: string): string[] =>
  existsSync(join(dataDir, JOURNAL_DIR))
    ? readdirSync(join(dataDir, JOURNAL_DIR))
        .filter((n) => n.endsWith('.jsonl'))
        .map((n) => join(JOURNAL_DIR, n))
    : [];
