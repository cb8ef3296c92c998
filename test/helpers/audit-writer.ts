import { AuditLog } from '../../src/mcp/audit.js';
import { auditEntry } from './audit-journal.js';

/**
 * A child process for test/mcp/audit-journal.test.ts: opens the audit trail of `<dir>` and records
 * `<count>` rows (0: until killed), one per turn of the event loop as sequential calls do, each with
 * commandId `<name>-<seq>`. After each row is written it prints `acked <seq>`; after the last one it
 * closes the trail (moving its journal) and prints "closed", unless `<close>` is "keep", when it waits
 * to be killed.
 */
const [dir, name, countArg, close] = process.argv.slice(2);
const count = Number(countArg);
const trail = AuditLog.open(dir!);
const say = (line: string) => process.stdout.write(`${line}\n`); // synchronous on pipes (Linux)
for (let seq = 1; count === 0 || seq <= count; seq++) {
  trail.record(auditEntry(`${name}-${seq}`, `agent:${name}`));
  await trail.written();
  say(`acked ${seq}`);
}
if (close !== 'keep') {
  trail.close();
  say('closed');
} else setInterval(() => undefined, 1000);
