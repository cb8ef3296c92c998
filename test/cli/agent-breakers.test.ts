import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { tripBreaker } from '../../src/actions/breakers.js';
import { ownerOf } from '../../src/actions/principals.js';
import { openApp } from '../../src/app.js';
import { getAgentByName } from '../../src/projections/principal-queries.js';
import { colony, logHead } from '../helpers/cli.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * `colony agents breakers NAME` (thresholds and open breakers, set with 0 = off and "default") and
 * `colony agents resume NAME [--goal G|none]` through the real CLI; bad input is one line with nothing written.
 */
describe('colony agents breakers and resume', () => {
  const scratch = tempDir('colony-cli-breakers-');
  const data = ['--data', scratch.dir];
  const run = (args: string[]) => colony([...args, ...data]);
  before(() => {
    assert.equal(run(['init']).code, 0);
    writeFileSync(join(scratch.dir, 'p.md'), 'You answer at once and exit.');
    const created = run(
      ['agents', 'create', 'looper', '--model', 'm', '--prompt-file', join(scratch.dir, 'p.md')].concat([
        '--tools',
        'whoami',
        '--command',
        'cat >/dev/null; echo hi',
      ]),
    );
    assert.equal(created.code, 0, created.stderr);
  });

  it('shows the defaults, sets thresholds (0 turns one off, "default" resets it) and refuses bad input', () => {
    assert.equal(
      run(['agents', 'breakers', 'looper']).stdout,
      'looper: no progress 5 runs, repeated failure 5 calls, wake rate 60 an hour\n  no open breaker\n',
    );
    const set = run(['agents', 'breakers', 'looper', '--max-runs-without-progress', '3', '--max-wakes-per-hour', '0']);
    assert.equal(
      set.stdout,
      'looper: no progress 3 runs, repeated failure 5 calls, wake rate off\n  no open breaker\n',
    );
    const json = JSON.parse(run(['agents', 'breakers', 'looper', '--max-wakes-per-hour', 'default', '--json']).stdout);
    assert.deepEqual(json, {
      agent: 'looper',
      max_runs_without_progress: 3,
      max_repeated_failures: 5,
      max_wakes_per_hour: 60,
      breakers: [],
    });
    const head = logHead(scratch.dir);
    for (const [flag, value] of [
      ['--max-repeated-failures', '-1'],
      ['--max-runs-without-progress', 'many'],
      ['--max-wakes-per-hour', '2.5'],
    ] as const) {
      const r = run(['agents', 'breakers', 'looper', flag, value]);
      assert.equal(r.code, 1);
      assert.match(
        r.stderr,
        new RegExp(`${flag} must be an integer ≥ 0 \\(0 turns it off\\) or "default", not "${value}"`),
      );
    }
    assert.match(run(['agents', 'breakers', 'nobody']).stderr, /agent nobody not found/);
    assert.match(
      run(['agents', 'resume', 'looper', '--goal', 'x']).stderr,
      /--goal must be a goal id or "none", not "x"/,
    );
    assert.equal(logHead(scratch.dir), head, 'nothing written');
  });

  it('lists an open breaker with its evidence and lifts it with resume', () => {
    const app = openApp({ dataDir: scratch.dir });
    const owner = ownerOf(app)!;
    const agent = getAgentByName(app.engine.db, owner.userId, 'looper')!;
    const reason =
      '3 runs in a row on its work outside goals ended without a claim, hand-in, message, proposal or verdict';
    tripBreaker(app, {
      agentId: agent.agentId,
      goalId: null,
      breaker: 'no_progress',
      reason,
      evidence: { runIds: [4, 5, 6], threshold: 3 },
    });
    app.engine.close();
    const shown = run(['agents', 'breakers', 'looper']).stdout.split('\n');
    assert.match(shown[1]!, new RegExp(`^  no_progress on work outside goals, tripped \\S+: ${reason}$`));
    assert.equal(shown[2], '    evidence: runs 4, 5, 6; lift: colony agents resume looper --goal none');
    assert.equal(
      run(['agents', 'resume', 'looper', '--goal', '7']).stdout,
      'looper has no open breaker on goal 7: nothing to lift\n',
    );
    assert.equal(
      run(['agents', 'resume', 'looper']).stdout,
      'Lifted the no_progress breaker of looper on work outside goals\n',
    );
    assert.equal(run(['agents', 'resume', 'looper']).stdout, 'looper has no open breaker: nothing to lift\n');
    assert.match(run(['agents', 'breakers', 'looper']).stdout, /\n {2}no open breaker\n$/);
  });
});
