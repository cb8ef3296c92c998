import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * closeInheritedDescriptors (src/runtime/inherited-fds.ts) closes every descriptor above stdio that is
 * open without close-on-exec, so no confined process gets it — but never the files V8 writes its
 * profiling output to under --perf-basic-prof (its perf map and its log, both opened without
 * close-on-exec): closed, V8's next lines would land in whatever file or socket took the number next —
 * a database, an HTTP response. The child reports, for each descriptor, its target and whether it is
 * close-on-exec, before and after.
 */
const MODULE = fileURLToPath(new URL('../../src/runtime/inherited-fds.ts', import.meta.url));
const SCRIPT = `
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { closeInheritedDescriptors } from ${JSON.stringify(MODULE)};
const fds = () => Object.fromEntries(readdirSync('/proc/self/fd').filter((n) => Number(n) > 2).flatMap((n) => {
  try {
    const flags = parseInt(/^flags:\\s*([0-7]+)/m.exec(readFileSync('/proc/self/fdinfo/' + n, 'utf8'))[1], 8);
    return [[n, { target: readlinkSync('/proc/self/fd/' + n), inherited: (flags & 0o2000000) === 0 }]];
  } catch { return []; }
}));
const before = fds();
const closed = closeInheritedDescriptors();
console.log(JSON.stringify({ pid: process.pid, before, closed, after: fds() }));
`;

type Fds = Record<string, { target: string; inherited: boolean }>;
interface Seen {
  /** What the child logged. */
  stderr: string;
  pid: number;
  before: Fds;
  closed: number[];
  after: Fds;
}

function runChild(flags: string[]): Seen {
  // In a directory of its own: V8 writes its per-isolate log into the working directory.
  const cwd = tempDir('colony-fds-');
  try {
    const args = [...flags, '--import', import.meta.resolve('tsx'), '--input-type=module', '-e', SCRIPT];
    const r = spawnSync(process.execPath, args, { cwd: cwd.dir, encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 0, r.stderr);
    const seen = { ...(JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Seen), stderr: r.stderr };
    rmSync(`/tmp/perf-${seen.pid}.map`, { force: true });
    return seen;
  } finally {
    cwd.cleanup();
  }
}

const v8Output = (seen: Seen, target: string) =>
  target === `/tmp/perf-${seen.pid}.map` || target.endsWith(`-${seen.pid}-v8.log`);

describe('descriptors open without close-on-exec', () => {
  it("are closed, but not V8's --perf-basic-prof map and log, which V8 goes on writing to", () => {
    const seen = runChild(['--perf-basic-prof']);
    const v8 = Object.entries(seen.before).filter(([, fd]) => v8Output(seen, fd.target));
    assert.ok(
      v8.some(([, fd]) => fd.target.endsWith('.map')),
      `V8 holds its map open: ${JSON.stringify(seen.before)}`,
    );
    for (const [n, fd] of v8) {
      assert.ok(!seen.closed.includes(Number(n)), `${fd.target} was closed`);
      assert.equal(seen.after[n]?.target, fd.target);
    }
    const left = Object.values(seen.after).filter((fd) => fd.inherited && !v8Output(seen, fd.target));
    assert.deepEqual(left, [], 'nothing else is left open without close-on-exec');
    // Processes Colony starts inherit them: the operator is told so, naming the files.
    assert.match(seen.stderr, /agents' included, inherits it writable/);
    assert.ok(seen.stderr.includes(`/tmp/perf-${seen.pid}.map`), seen.stderr);
  });

  it('are all closed without a V8 profiling flag', () => {
    const seen = runChild([]);
    assert.doesNotMatch(seen.stderr, /profiling output/);
    assert.deepEqual(
      Object.values(seen.after).filter((fd) => fd.inherited),
      [],
    );
  });
});
