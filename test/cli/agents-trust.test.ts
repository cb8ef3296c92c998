import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { recordEvidence } from '../../src/actions/reputation.js';
import { openApp } from '../../src/app.js';
import { getAgentByName } from '../../src/projections/principal-queries.js';
import { colony, colonyFails, colonyOk, oneLine, stdioClient } from '../helpers/cli.js';
import { tempDir } from '../../testkit/temp-dir.js';
import { callTool } from '../helpers/mcp.js';

/**
 * `colony agents show NAME [--json]` and `colony agents unquarantine NAME` as separate processes on a
 * real data dir: the config hash and reputation by domain, a quarantine (imposed
 * in-process by bad evidence) shown and lifted — and the lift reaching a running `colony stdio` session
 * on its next call.
 */
type Body = Record<string, unknown>;
type Shown = Body & {
  id: number;
  name: string;
  config_hash: string;
  quarantined: boolean;
  quarantine_reason: string | null;
  system_prompt: string;
  reputation: {
    rolling_score: number;
    evidence_count: number;
    last_evidence_at: string | null;
    domains: { domain: string; score: number; evidence_count: number }[];
  };
};
const scratch = tempDir('colony-cli-trust-');
after(() => scratch.cleanup());

function eventTypes(dir: string): string[] {
  const db = new Database(join(dir, 'colony.db'), { readonly: true });
  try {
    return (db.prepare('SELECT type FROM es_events ORDER BY position').all() as { type: string }[]).map((r) => r.type);
  } finally {
    db.close();
  }
}
const run = (dir: string, args: string[]): string => colonyOk([...args, '--data', dir]);
const show = (dir: string, name: string): Shown => JSON.parse(run(dir, ['agents', 'show', name, '--json'])) as Shown;

describe('colony agents show / unquarantine', () => {
  let dir: string;
  let client: Client | undefined;
  let workerToken: string;

  before(() => {
    dir = join(scratch.dir, 'data');
    const init = colony(['init', '--data', dir, '--json']);
    assert.equal(init.code, 0, init.stderr);
    const prompt = join(scratch.dir, 'prompt.txt');
    writeFileSync(prompt, 'You fix broken links in the documentation.');
    const created = JSON.parse(
      run(dir, [
        'agents',
        'create',
        'worker',
        '--model',
        'claude-sonnet',
        '--prompt-file',
        prompt,
        '--tools',
        'whoami,send_message,list_goals',
        '--json',
      ]),
    );
    workerToken = created.token;
  });
  after(async () => {
    await client?.close();
  });

  it('--help documents both commands', () => {
    for (const cmd of ['show', 'unquarantine']) {
      const r = colony(['agents', cmd, '--help']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`Usage: colony agents ${cmd} \\[options\\] <name>`));
    }
  });

  it('show --json: the agent, its config hash and its reputation (a new root agent: 0.5 in default, one seed row)', () => {
    const a = show(dir, 'worker');
    assert.equal(a.name, 'worker');
    assert.equal(a.system_prompt, 'You fix broken links in the documentation.');
    assert.match(a.config_hash, /^[0-9a-f]{64}$/);
    assert.equal(a.quarantined, false);
    assert.equal(a.reputation.evidence_count, 1);
    assert.equal(a.quarantined, false);
    assert.ok(
      Math.abs(a.reputation.rolling_score - 0.5) < 1e-4,
      `≈0.5 (the CLI reads at the system clock): ${a.reputation.rolling_score}`,
    );
    assert.deepEqual(
      a.reputation.domains.map((d) => [d.domain, d.evidence_count]),
      [['default', 1]],
    );
    assert.match(a.reputation.last_evidence_at ?? '', /^\d{4}-\d\d-\d\dT/);
    assert.equal(show(dir, 'worker').config_hash, a.config_hash, 'stable');
  });

  it('show without --json prints the hash, the status and the score per domain', () => {
    const out = run(dir, ['agents', 'show', 'worker']);
    const a = show(dir, 'worker');
    assert.match(out, new RegExp(`^worker \\(id ${a.id}\\) {2}supervised {2}claude-sonnet {2}active$`, 'm'));
    assert.match(out, new RegExp(`config hash ${a.config_hash}`));
    assert.match(out, /^reputation 0\.500 over 1 evidence rows \(last .+\)$/m);
    assert.match(out, /^ {2}default: 0\.500 \(1\)$/m);
  });

  it('shows a quarantine, lifts it with unquarantine (reputation unchanged), and the running stdio session may write again', async () => {
    // Bad evidence, recorded in-process on the same data dir: 0.5 − 0.3 = 0.2 < 0.3.
    const app = openApp({ dataDir: dir });
    try {
      recordEvidence(app, getAgentByName(app.engine.db, 1, 'worker')!, 'default', -0.3, 'test:bad verdict', {
        actor: 'user:owner',
      });
    } finally {
      app.engine.close();
    }
    const types = eventTypes(dir);
    assert.equal(
      types.indexOf('AgentQuarantined'),
      types.lastIndexOf('EvidenceRecorded') + 1,
      'quarantined right after the evidence',
    );
    const q = show(dir, 'worker');
    assert.equal(q.quarantined, true);
    assert.equal(q.quarantine_reason, 'reputation=0.20 below 0.3');
    assert.equal(q.quarantined, true);
    assert.equal(q.reputation.evidence_count, 2);
    assert.match(
      run(dir, ['agents', 'show', 'worker']),
      /^worker \(id \d+\) .* QUARANTINED: reputation=0\.20 below 0\.3$/m,
    );
    assert.match(run(dir, ['agents', 'list']), /worker .* QUARANTINED/);

    client = await stdioClient(dir, workerToken);
    const refusedWrite = await callTool(client, 'send_message', { to: 'owner', body: 'may I?' });
    assert.equal(refusedWrite.result.isError, true);
    assert.match(refusedWrite.text, /^ErrAgentQuarantined: /);
    assert.equal((await callTool(client, 'whoami')).result.isError, undefined, 'read tools still work');

    const before = eventTypes(dir).length;
    const lifted = colony(['agents', 'unquarantine', 'worker', '--data', dir]);
    assert.equal(lifted.code, 0, lifted.stderr);
    assert.equal(lifted.stdout, 'Lifted the quarantine of worker\n');
    assert.deepEqual(eventTypes(dir).slice(before), ['AgentUnquarantined']);
    const a = show(dir, 'worker');
    assert.deepEqual([a.quarantined, a.quarantine_reason, a.quarantined], [false, null, false]);
    assert.equal(a.reputation.evidence_count, q.reputation.evidence_count, 'no evidence added or removed');
    assert.equal(a.config_hash, q.config_hash);
    assert.ok(Math.abs(a.reputation.rolling_score - 0.2) < 1e-4, String(a.reputation.rolling_score));

    const sent = await callTool(client, 'send_message', { to: 'owner', body: 'back to work' });
    assert.equal(sent.result.isError, undefined, sent.text);
  });

  it('unquarantine of an agent that is not quarantined says so and appends nothing', () => {
    const before = eventTypes(dir).length;
    assert.equal(run(dir, ['agents', 'unquarantine', 'worker']), 'worker was not quarantined\n');
    assert.equal(eventTypes(dir).length, before);
  });

  it('an unknown agent is one clear line and a non-zero exit', () => {
    colonyFails(dir, ['agents', 'show', 'nobody'], /agent nobody not found/);
    colonyFails(dir, ['agents', 'show', 'nobody', '--json'], /agent nobody not found/);
    colonyFails(dir, ['agents', 'unquarantine', 'nobody'], /agent nobody not found/);
    colonyFails(dir, ['agents', 'show'], /missing required argument 'name'/);
  });

  it('an uninitialized data dir is refused', () => {
    const r = colony(['agents', 'show', 'worker', '--data', join(scratch.dir, 'empty')]);
    assert.notEqual(r.code, 0);
    oneLine(r.stderr);
  });
});
