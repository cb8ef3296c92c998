import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runtimeFixture } from '../helpers/runtime.js';
import { sessionMessages } from '../../src/projections/run-queries.js';

test('smoke: manual wake runs the command and records the run', async () => {
  const f = await runtimeFixture();
  try {
    const a = f.addRunner('echoer', `cat >/dev/null; echo "hello from $COLONY_AGENT run $COLONY_RUN_ID"; echo '{"result":"done","total_cost_usd":0.02,"usage":{"input_tokens":10,"output_tokens":5}}'`);
    const out = f.reactor.wake({ agentId: a.agentId, source: 'manual', by: 'user-1' });
    const run = await f.reactor.whenDone(out.run.runId);
    console.log(run);
    console.log(sessionMessages(f.app.engine.db, run.runId));
    assert.equal(run.status, 'succeeded');
  } finally {
    await f.close();
  }
});
