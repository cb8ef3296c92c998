import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startAuthProxy, type AuthProxy } from '../../helpers/auth-proxy.js';
import { runBounded, type BoundedResult } from '../../helpers/bounded.js';
import { runtimeFixture, type RuntimeFixture } from '../../helpers/runtime.js';

/**
 * The official conformance suite's tasks-* scenarios (conformance 0.2.0-alpha.12, installed as
 * conformance-2026; extension scenarios run only by name) against a serving Colony with a real runtime,
 * through the test auth proxy (the suite cannot send a bearer token).
 *
 * The scenarios drive the reference server's fixture tools. One of them maps onto Colony's own long
 * call, so the proxy rewrites it: `slow_compute {seconds}` becomes `execute_agent` of an agent whose
 * backend sleeps that many seconds — then the lifecycle, wire-field, header and envelope checks run
 * against Colony's real execute_agent task (created, polled, completed, cancelled). Each scenario gets
 * its own agent, so their runs do not queue behind each other. The other fixtures (greet,
 * failing_job, protocol_error_job, confirm_delete, multi_input, test_tool_with_task) have no Colony
 * counterpart: their checks fail with "no tool named …" and are listed below as not applicable.
 */
const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));
const SHIM = here('../../helpers/conformance-node20.mjs');
const RUNNER = here('../../../node_modules/conformance-2026/dist/index.js');

/** Per scenario: the checks that must pass against Colony. Every other check of it needs a fixture Colony does not have. */
const MUST_PASS: Record<string, readonly string[]> = {
  'tasks-lifecycle': [
    'sep-2663-result-type-task-on-create',
    'sep-2663-tasks-get-status-working',
    'sep-2663-tasks-get-status-completed',
    'sep-2663-cancel-ack-empty-result',
    'tasks-cancel-terminal-idempotent-ack',
    'wire-schema-valid',
  ],
  'tasks-capability-negotiation': [
    'tasks-extension-advertised',
    'sep-2663-tasks-methods-non-declaring',
    'sep-2663-server-rejects-undeclared-client',
    'tasks-per-request-meta-opt-in',
    'wire-schema-valid',
  ],
  'tasks-wire-fields': [
    'tasks-wire-field-renames',
    'tasks-no-early-ttl-expiry',
    'tasks-no-related-task-meta-on-inlined-result',
    'wire-schema-valid',
  ],
  'tasks-request-state-removal': [
    'tasks-create-result-no-request-state',
    'tasks-get-detailed-no-request-state',
    'wire-schema-valid',
  ],
  'tasks-request-headers': [
    'sep-2663-routing-headers-accepted-on-tasks-get',
    'tasks-headers-reject-mismatched-method',
    'sep-2663-server-rejects-mismatched-mcp-name-on-tasks-get',
    'wire-schema-valid',
  ],
  'tasks-dispatch-and-envelope': [
    'sep-2663-tasks-result-removed-method-not-found',
    'tasks-removed-tasks-list',
    'tasks-immediate-result-shortcut',
    'tasks-result-type-complete-on-non-task-responses',
    'sep-2663-durable-create-strong-consistency',
    'sep-2663-tasks-get-invalid-task-id-32602',
    'wire-schema-valid',
  ],
};
/**
 * Fixture checks, not applicable: greet (a sync fixture tool) in tasks-sync-tool-call, the header
 * tolerance check and the legacy-task-param check (the last passes only because "no tool named greet"
 * has content); failing_job, whose tool error must be `isError: true` — execute_agent answers a failed
 * run with its codomyrmex-shaped result instead; protocol_error_job (a Colony task never fails at the
 * protocol level); tasks-required-task-error (no Colony tool requires a task); the MRTR ones.
 */
const FIXTURE_ONLY = new Set([
  'tasks-sync-tool-call',
  'sep-2663-tool-error-uses-completed-status',
  'sep-2663-tasks-get-status-failed',
  'tasks-headers-tolerate-mcp-method-on-tools-call',
  'tasks-server-directed-creation-no-hint',
  'sep-2663-legacy-task-param-ignored',
]);

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

let f: RuntimeFixture;
let root: string;
const proxies: AuthProxy[] = [];
const runs = new Map<string, { r: BoundedResult; checks: Check[] }>();

/** A proxy whose slow_compute is execute_agent of `agent` (its backend sleeps the prompt's seconds). */
async function proxyFor(agent: string): Promise<AuthProxy> {
  const proxy = await startAuthProxy(f.base, f.ownerToken, (m) => {
    const params = m.params as { name?: string; arguments?: { seconds?: number }; _meta?: unknown } | undefined;
    if (m.method !== 'tools/call' || params?.name !== 'slow_compute') return undefined;
    return {
      ...m,
      params: {
        ...params,
        name: 'execute_agent',
        arguments: { agent_name: agent, prompt: String(params.arguments?.seconds ?? 0) },
      },
    };
  });
  proxies.push(proxy);
  return proxy;
}

before(async () => {
  f = await runtimeFixture();
  root = mkdtempSync(join(tmpdir(), 'colony-tasks-conformance-'));
  // The wake prompt's last line is the prompt: sleep that many seconds, then answer.
  const sleeper = `s=$(tail -n 1); sleep "$s"; echo "{\\"type\\":\\"result\\",\\"result\\":\\"slept $s s\\"}"`;
  await Promise.all(
    Object.keys(MUST_PASS).map(async (scenario, i) => {
      f.addRunner(`slow-${i}`, sleeper);
      const proxy = await proxyFor(`slow-${i}`);
      const out = join(root, scenario);
      const r = await runBounded(
        process.execPath,
        ['--import', SHIM, RUNNER, 'server', '--url', `${proxy.url}/mcp`, '--scenario', scenario, '--output-dir', out],
        { env: { ...process.env, NO_COLOR: '1' }, timeoutMs: 60_000 },
      );
      const dir = existsSync(out) ? readdirSync(out).find((d) => existsSync(join(out, d, 'checks.json'))) : undefined;
      runs.set(scenario, {
        r,
        checks: dir ? (JSON.parse(readFileSync(join(out, dir, 'checks.json'), 'utf8')) as Check[]) : [],
      });
    }),
  );
});

after(async () => {
  await Promise.all(proxies.map((p) => p.close()));
  await f?.close();
  rmSync(root, { recursive: true, force: true });
});

describe('conformance-2026 tasks-* scenarios → Colony (slow_compute mapped onto execute_agent)', () => {
  for (const [scenario, mustPass] of Object.entries(MUST_PASS)) {
    it(`${scenario}: every applicable check passes`, () => {
      const { r, checks } = runs.get(scenario)!;
      assert.ok(checks.length > 0, `${scenario} produced no checks (exit ${r.code}):\n${r.stdout}\n${r.stderr}`);
      const by = new Map(checks.map((c) => [c.id, c]));
      for (const id of mustPass)
        assert.equal(by.get(id)?.status, 'SUCCESS', `${scenario} ${id}: ${JSON.stringify(by.get(id))}`);
      const others = checks.filter((c) => !mustPass.includes(c.id) && c.status !== 'SUCCESS');
      assert.deepEqual(
        others.filter((c) => !FIXTURE_ONLY.has(c.id)).map((c) => c.id),
        [],
        `${scenario}: unexpected failures`,
      );
    });
  }
});
