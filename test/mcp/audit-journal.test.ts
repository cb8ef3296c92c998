import assert from 'node:assert/strict';
import { appendFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { AuditLog } from '../../src/mcp/audit.js';
import { JOURNAL_DIR } from '../../src/mcp/audit-journal.js';
import { tempDir } from '../../testkit/temp-dir.js';
import { auditEntry } from '../helpers/audit-journal.js';
import { spawnScript, type Child } from '../helpers/processes.js';

/**
 * The audit journal (src/mcp/audit-journal.ts): a row acknowledged as written survives kill -9 and reaches
 * audit.db exactly once, whichever process moves it, while writers and readers run at the same time.
 */
const WRITER = fileURLToPath(new URL('../helpers/audit-writer.ts', import.meta.url));
const writer = (dir: string, name: string, count: number, close = 'close'): Child =>
  spawnScript(WRITER, [dir, name, String(count), close]);

const lastAck = (c: Child): number =>
  Math.max(0, ...c.lines.filter((l) => l.startsWith('acked ')).map((l) => Number(l.slice(6))));
const journalFiles = (dir: string): string[] => readdirSync(join(dir, JOURNAL_DIR));
async function untilAcked(c: Child, n: number): Promise<void> {
  while (lastAck(c) < n) {
    if (c.proc.exitCode !== null) throw new Error(`writer ended early: ${c.stderr()}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('the audit journal', () => {
  it('keeps every acknowledged row of a writer killed -9; the next open moves them, in call order', async (t) => {
    const scratch = tempDir('colony-audit-journal-');
    t.after(scratch.cleanup);
    AuditLog.open(scratch.dir).close();
    const w = writer(scratch.dir, 'k', 0, 'keep');
    await untilAcked(w, 300);
    w.proc.kill('SIGKILL');
    await w.exit;
    const acked = lastAck(w);
    assert.ok(
      journalFiles(scratch.dir).some((f) => f.endsWith('.jsonl')),
      'the dead writer left its journal',
    );
    const trail = AuditLog.open(scratch.dir);
    t.after(() => trail.close());
    const ids = trail.query().map((r) => r.commandId);
    assert.ok(ids.length >= acked, `${ids.length} rows, ${acked} acknowledged`);
    assert.deepEqual(
      ids,
      ids.map((_, i) => `k-${i + 1}`),
    );
    assert.deepEqual(journalFiles(scratch.dir), [], 'the recovered segment and its lock are gone');
  });

  it('moves each row exactly once while two writers write and this process tails the trail', async (t) => {
    const scratch = tempDir('colony-audit-journal-');
    t.after(scratch.cleanup);
    const reader = AuditLog.open(scratch.dir);
    t.after(() => reader.close());
    const writers = [writer(scratch.dir, 'a', 400), writer(scratch.dir, 'b', 400)];
    const seen: string[] = [];
    let after = 0;
    const tail = () => {
      for (const r of reader.query({ after })) {
        seen.push(r.commandId!);
        after = r.id;
      }
    };
    while (writers.some((w) => !w.lines.includes('closed'))) {
      const acked = writers.map(lastAck);
      tail();
      // A row acknowledged before the read began is seen by it: readers move live journals too.
      for (const [i, name] of ['a', 'b'].entries())
        if (acked[i]! > 0) assert.ok(seen.includes(`${name}-${acked[i]}`), `${name}-${acked[i]} not seen`);
      await new Promise((r) => setTimeout(r, 5));
      if (writers.some((w) => w.proc.exitCode !== null && !w.lines.includes('closed')))
        throw new Error(writers.map((w) => w.stderr()).join('\n'));
    }
    await Promise.all(writers.map((w) => w.exit));
    tail();
    assert.equal(seen.length, 800);
    assert.equal(new Set(seen).size, 800, 'no row moved twice');
    for (const name of ['a', 'b'])
      assert.deepEqual(
        seen.filter((id) => id.startsWith(`${name}-`)),
        Array.from({ length: 400 }, (_, i) => `${name}-${i + 1}`),
      );
    assert.equal(reader.count(), 800);
    assert.deepEqual(journalFiles(scratch.dir), [], 'writers that closed cleanly leave no journal');
  });

  it("drops a dead writer's partial last line, skips a line that is not a row, and keeps the rest", async (t) => {
    const scratch = tempDir('colony-audit-journal-');
    t.after(scratch.cleanup);
    const w = writer(scratch.dir, 'p', 0, 'keep');
    await untilAcked(w, 5);
    w.proc.kill('SIGKILL');
    await w.exit;
    const segment = journalFiles(scratch.dir).find((f) => f.endsWith('.jsonl'))!;
    appendFileSync(join(scratch.dir, JOURNAL_DIR, segment), '{"not":"a row"}\n["2026-01-01T00:00:00.000Z","agent:x"');
    const trail = AuditLog.open(scratch.dir);
    t.after(() => trail.close());
    const ids = trail.query().map((r) => r.commandId!);
    assert.ok(ids.length >= 5);
    assert.ok(ids.every((id) => /^p-\d+$/.test(id)));
    assert.deepEqual(journalFiles(scratch.dir), []);
  });

  it('rotates a fully moved segment past its size, and a clean close removes the journal', async (t) => {
    const scratch = tempDir('colony-audit-journal-');
    t.after(scratch.cleanup);
    const trail = AuditLog.open(scratch.dir, { rotateBytes: 500 });
    const segments = new Set<string>();
    for (let i = 0; i < 60; i++) {
      trail.record(auditEntry(`r-${i}`));
      await trail.written();
      for (const f of journalFiles(scratch.dir)) if (f.endsWith('.jsonl')) segments.add(f);
      if (i % 10 === 9) trail.count(); // a read moves the journal, and a moved segment past 500 bytes (~6 rows) rotates
    }
    assert.ok(segments.size >= 5, `${segments.size} segments`);
    assert.ok(journalFiles(scratch.dir).filter((f) => f.endsWith('.jsonl')).length <= 1);
    assert.deepEqual(
      trail.query().map((r) => r.commandId),
      Array.from({ length: 60 }, (_, i) => `r-${i}`),
    );
    trail.close();
    assert.deepEqual(journalFiles(scratch.dir), []);
    const again = AuditLog.open(scratch.dir);
    t.after(() => again.close());
    assert.equal(again.count(), 60);
  });

  it('moves a row longer than a read chunk, skips a row audit.db refuses, and keeps the rows after both', async (t) => {
    const scratch = tempDir('colony-audit-journal-');
    t.after(scratch.cleanup);
    const trail = AuditLog.open(scratch.dir);
    t.after(() => trail.close());
    const long = `agent:${'x'.repeat(5 << 20)}`; // longer than the 4 MiB chunk a move reads
    trail.record(auditEntry('before'));
    trail.record(auditEntry('long', long));
    trail.record({ ...auditEntry('refused'), durationMs: Number.NaN }); // NULL for a NOT NULL column
    trail.record(auditEntry('after'));
    trail.record({ ...auditEntry('named'), tool: 'y'.repeat(1000) });
    await trail.written();
    const rows = trail.query();
    assert.deepEqual(
      rows.map((r) => r.commandId),
      ['before', 'long', 'after', 'named'],
    );
    assert.equal(rows[1]!.principal, long);
    assert.equal(rows[3]!.tool, `${'y'.repeat(200)}…`, "an unknown tool's name is kept to 200 characters");
  });

  it('removes, on open, the files of segments no row names once their lock is free; a new lock file stays', (t) => {
    const scratch = tempDir('colony-audit-journal-');
    t.after(scratch.cleanup);
    AuditLog.open(scratch.dir).close();
    const dir = join(scratch.dir, JOURNAL_DIR);
    writeFileSync(join(dir, '4242-0123456789ab.jsonl'), '["left behind"]\n'); // a mover died after its COMMIT
    writeFileSync(join(dir, '4242-0123456789ab.lock'), '');
    writeFileSync(join(dir, '4343-0123456789ab.lock'), ''); // an owner between its lock and its registration
    writeFileSync(join(dir, 'notes.txt'), 'not a segment');
    const trail = AuditLog.open(scratch.dir);
    t.after(() => trail.close());
    assert.equal(trail.count(), 0, 'an orphan is never moved: its rows were');
    assert.deepEqual(journalFiles(scratch.dir).sort(), ['4343-0123456789ab.lock', 'notes.txt']);
  });
});
