import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CODE_ENTRIES, COLONY_ROOT } from '../../src/runtime/confine-mounts.js';
import { sandboxIdentity } from '../../src/sandbox-user.js';
import { COLONY_BIN, colony } from '../helpers/cli.js';
import { runtimeFixture } from '../helpers/runtime.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * Issue 31, items 11 and 12 (the sandbox's own parts), through real confined runs:
 * - a confined process is never uid 0: as root, Colony runs it as the sandbox's unprivileged uid (65534
 *   unless COLONY_SANDBOX_UID says otherwise), so a root-only file is unreadable even where it is mounted,
 *   and what it writes in its workspace is that uid's;
 * - /etc is an allowlist (no shadow, no service configs such as PostgreSQL's pg_hba.conf) with Colony's own
 *   passwd; only the parts of the checkout that run are mounted (no .git, no .env);
 * - no descriptor Colony inherited reaches the sandbox.
 */
const who = sandboxIdentity();

describe('who a confined process is, and what it sees of the host', () => {
  it('runs as an unprivileged uid, reads no root-only file, and sees an /etc allowlist and only the code that runs', async (t) => {
    const f = await runtimeFixture();
    t.after(() => f.close());
    const ws = join(f.app.dataDir, 'workspace', 'agents', 'probe');
    const runner = f.addRunner(
      'probe',
      [
        'cat >/dev/null',
        'echo "uid=$(id -u) gid=$(id -g) user=$(id -un)"',
        'cat root-only.txt 2>/dev/null && echo "root-only: LEAKED" || echo "root-only: DENIED"',
        'for p in /etc/shadow /etc/gshadow /etc/sudoers /etc/postgresql /etc/ssh /etc/ssl/private; do test -e $p && echo "etc: $p VISIBLE"; done',
        'grep -c . /etc/passwd | sed "s/^/passwd lines: /"',
        `ls -a '${COLONY_ROOT}' | tr '\\n' ' ' | sed 's/^/checkout: /'; echo`,
        'test -r /etc/ssl/certs/ca-certificates.crt -o -d /etc/ssl/certs && echo "certs: OK"',
        'echo mine > own.txt',
      ].join('\n'),
    );
    // A root-only file where the agent works (as if a mount mistake put it there).
    const first = await f.reactor.whenDone(
      f.reactor.wake({ agentId: runner.agentId, source: 'manual', by: 'user-1' }).run.runId,
    );
    assert.equal(first.status, 'succeeded', first.outputTail ?? '');
    writeFileSync(join(ws, 'root-only.txt'), 'ROOT SECRET');
    chmodSync(join(ws, 'root-only.txt'), 0o600);
    const run = await f.reactor.whenDone(
      f.reactor.wake({ agentId: runner.agentId, source: 'manual', by: 'user-1' }).run.runId,
    );
    const out = run.outputTail ?? '';
    assert.equal(run.status, 'succeeded', out);
    assert.match(out, new RegExp(`uid=${who.uid} gid=${who.gid} user=agent`));
    assert.notEqual(who.uid, 0, 'never uid 0');
    if (who.switched) assert.match(out, /root-only: DENIED/);
    assert.doesNotMatch(out, /LEAKED|VISIBLE|ROOT SECRET/);
    assert.match(out, /passwd lines: [12]\n/, "Colony's own passwd: root and agent only");
    assert.match(out, /certs: OK/);
    const seen = /checkout: (.*)/.exec(out)![1]!.trim().split(' ');
    const top = new Set(CODE_ENTRIES.map((e) => e.split('/')[0]));
    for (const name of seen.filter((n) => n !== '.' && n !== '..'))
      assert.ok(top.has(name), `${name} of the checkout is mounted (only what runs should be)`);
    assert.ok(!seen.includes('.git') && !seen.includes('.env'));
    assert.equal(statSync(join(ws, 'own.txt')).uid, who.uid, "what it writes is the sandbox uid's");
    assert.equal(run.sandbox?.mode, 'bwrap');
  });

  it('a descriptor Colony inherited does not reach the sandbox', async (t) => {
    const scratch = tempDir('colony-fds-');
    t.after(() => scratch.cleanup());
    const data = join(scratch.dir, 'data');
    const listing = 'cat >/dev/null; ls -l /proc/self/fd > fds.txt';
    assert.equal(colony(['init', '--data', data, '--agent-command', listing]).code, 0);
    writeFileSync(join(scratch.dir, 'prompt.md'), 'You list descriptors.');
    const created = colony([
      'agents',
      'create',
      'lister',
      '--data',
      data,
      '--model',
      'scripted',
      '--prompt-file',
      join(scratch.dir, 'prompt.md'),
      '--tools',
      'whoami',
    ]);
    assert.equal(created.code, 0, created.stderr);
    // serve starts with an extra pipe at descriptor 3, inherited without close-on-exec, as a shell or a
    // supervisor might leave one.
    const serve = spawn(process.execPath, [COLONY_BIN, 'serve', '--port', '0', '--data', data], {
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
      env: { ...process.env, COLONY_DATA: '' },
    });
    t.after(() => serve.kill('SIGTERM'));
    let err = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`serve did not start: ${err}`)), 30_000);
      serve.stderr!.on('data', (c: Buffer) => {
        err += c.toString();
        if (/Colony listening on /.test(err)) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    assert.equal(colony(['agents', 'wake', 'lister', '--data', data]).code, 0);
    const file = join(data, 'workspace', 'agents', 'lister', 'fds.txt');
    for (let i = 0; i < 200 && !existsSync(file); i++) await new Promise((r) => setTimeout(r, 100));
    const fds = readFileSync(file, 'utf8')
      .split('\n')
      .map((l) => /\s(\d+) -> (.*)$/.exec(l))
      .filter((m): m is RegExpExecArray => m !== null)
      .filter(([, n]) => Number(n) > 2);
    // Above stdio there is at most ls's own descriptor on /proc/<pid>/fd: never the inherited pipe.
    const leaked = fds.filter(([, , target]) => !/^\/proc\/\d+\/fd$/.test(target!)).map((m) => m[0]);
    assert.deepEqual(leaked, []);
    assert.ok(readdirSync(join(data, 'workspace', 'agents', 'lister')).includes('fds.txt'));
  });
});
