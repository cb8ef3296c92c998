import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { decideProposal, proposeTaskTree } from '../../src/actions/proposals.js';
import { openApp } from '../../src/app.js';
import type { TreeRequest } from '../../src/events/proposals.js';
import { colony, colonyFails, colonyOk, stdioClient } from '../helpers/cli.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * `colony goals create`, `colony proposals list|show`, `colony goals show`'s pending proposal and
 * `colony approve` as separate processes on a real data dir. Recipes and the proposing agent are made
 * with the CLI; the trees come from the app's actions (what propose_task_tree runs) and the agent
 * proposal from that agent's own MCP client over `colony stdio`.
 */
type Body = Record<string, unknown>;
const scratch = tempDir('colony-cli-proposals-');
after(() => scratch.cleanup());
const dir = join(scratch.dir, 'data');
const DESCRIPTION = 'Keep every page of the documentation site accurate against the code.';
const LINT = 'npm run lint -- --max-warnings 0';
const BACKEND = 'lead-backend --fast --profile docs';
const owner = { key: 'user-1', name: 'owner', tenant: 1 };

const run = (args: string[]): string => colonyOk([...args, '--data', dir]);
const json = (args: string[]): Body => JSON.parse(run([...args, '--json'])) as Body;
/** Runs app actions in this process on the data dir (closed before the next CLI call). */
function withApp<T>(fn: (app: ReturnType<typeof openApp>) => T): T {
  const app = openApp({ dataDir: dir });
  try {
    return fn(app);
  } finally {
    app.engine.close();
  }
}

let leadToken: string;
before(() => {
  assert.equal(colony(['init', '--data', dir]).code, 0);
  run(['verifiers', 'add', 'lint', '--command', LINT]);
  const prompt = join(scratch.dir, 'prompt.md');
  writeFileSync(prompt, 'You lead the documentation work and propose writers.');
  leadToken = json([
    'agents',
    'create',
    'lead',
    '--model',
    'test-model',
    '--prompt-file',
    prompt,
    '--tier',
    'assisted',
    '--tools',
    'propose_agent,whoami,read_inbox',
    '--command',
    BACKEND,
  ]).token as string;
});

describe('colony goals create', () => {
  it('creates a draft goal with its channel, as create_goal does, and prints id, channel and status', () => {
    const out = run(['goals', 'create', '--title', 'Ship the release notes', '--description', DESCRIPTION]);
    assert.match(
      out,
      /^Created goal 1 "Ship the release notes" — draft {3}#goal-ship-the-release-notes {3}approvals: human\n$/,
    );
    const g = json(['goals', 'show', '1']).goal as Body;
    assert.deepEqual(
      [g.status, g.coordinator, g.approval_mode, g.max_spawn_depth, g.budget_tokens, g.budget_dollars_cents],
      ['draft', 'coordinator', 'human', 3, null, null],
    );
  });

  it('--json, budgets and --auto', () => {
    const made = json([
      'goals',
      'create',
      '--title',
      'Audit the API docs',
      '--description',
      DESCRIPTION,
      '--budget-cents',
      '2500',
      '--budget-tokens',
      '90000',
      '--auto',
    ]);
    assert.deepEqual(made, {
      goal_id: 2,
      slug: 'audit-the-api-docs',
      channel: 'goal-audit-the-api-docs',
      channel_id: made.channel_id,
      coordinator_agent_id: made.coordinator_agent_id,
      status: 'draft',
      approval_mode: 'auto',
    });
    const g = json(['goals', 'show', '2']).goal as Body;
    assert.deepEqual([g.approval_mode, g.budget_dollars_cents, g.budget_tokens], ['auto', 2500, 90000]);
    // Auto mode: a proposed tree is approved at once.
    const p = withApp((app) =>
      proposeTaskTree(
        app,
        owner,
        2,
        '',
        { title: 'Check every endpoint', description: 'Compare each endpoint with its page.' },
        { actor: 'user:owner' },
      ),
    );
    assert.equal(p.approved, true);
  });

  it('refuses wrong input with one line and writes nothing', () => {
    const ok = ['--title', 'A fine title', '--description', DESCRIPTION];
    colonyFails(
      dir,
      ['goals', 'create', '--title', 'ab', '--description', DESCRIPTION],
      /^colony: --title: too small: expected string to have >=3 characters$/,
    );
    colonyFails(
      dir,
      ['goals', 'create', '--title', 'A fine title', '--description', 'too short'],
      /^colony: --description: too small/,
    );
    colonyFails(
      dir,
      ['goals', 'create', '--title', 'A fine title'],
      /required option '--description <text>' not specified/,
    );
    colonyFails(
      dir,
      ['goals', 'create', ...ok, '--budget-cents', '-5'],
      /^colony: --budget-cents must be a non-negative integer, not "-5"$/,
    );
    colonyFails(
      dir,
      ['goals', 'create', ...ok, '--budget-tokens', '1e3'],
      /--budget-tokens must be a non-negative integer, not "1e3"/,
    );
    colonyFails(
      dir,
      ['goals', 'create', ...ok, '--budget-tokens', '99999999999999999999'],
      /--budget-tokens must be a non-negative integer/,
    );
  });
});

describe('colony proposals list|show, goals show and approve', () => {
  let treeId: number;
  let agentProposal: number;
  const hostile = 'Audit \u001b[2Jthe guide\n  * recipe "evil": sh -c "rm -rf /"';

  before(async () => {
    run(['goals', 'create', '--title', 'Write the API pages', '--description', DESCRIPTION]);
    const taskId = withApp((app) => {
      const tree: TreeRequest = {
        title: 'Audit the docs',
        description: 'Every page against the code.',
        budget_tokens: 5000,
        children: [
          {
            title: hostile,
            description: 'Run the install steps on a clean machine.',
            verifier_config: { kind: 'command', recipe: 'lint' },
          },
          { title: 'Audit the API reference', description: 'Each endpoint against its handler.' },
        ],
      };
      treeId = proposeTaskTree(app, owner, 1, 'Two sections, one checked by lint.', tree, {
        actor: 'user:owner',
      }).proposalId;
      // Goal 3 (human approvals) gets an approved task, and the lead proposes a writer for it.
      const first = proposeTaskTree(
        app,
        owner,
        3,
        '',
        { title: 'Write the endpoint pages', description: 'One page per endpoint.' },
        { actor: 'user:owner' },
      );
      return decideProposal(app, owner, first.proposalId, 'approve', '', { actor: 'user:owner' }).taskIds[0]!;
    });
    agentProposal = await asLead((lead) =>
      lead.callTool({
        name: 'propose_agent',
        arguments: {
          goal_id: 3,
          parent_task_id: taskId,
          name: 'api-writer',
          model: 'test-model',
          system_prompt: 'You write API reference pages, precisely.',
          tool_scope: ['whoami'],
          autonomy_tier: 'supervised',
          reason: 'The endpoints need a dedicated writer.',
        },
      }),
    );
  });

  it('lists pending proposals with goal, proposer, kind and status', () => {
    const lines = run(['proposals', 'list']).trimEnd().split('\n');
    assert.equal(lines.length, 2, lines.join('\n'));
    assert.match(
      lines[0]!,
      new RegExp(
        `^ +${agentProposal} {2}pending {3}agent {2}goal 3 "Write the API pages" {2}by lead {2}\\(agent api-writer, 1 command on the host\\)$`,
      ),
    );
    assert.match(
      lines[1]!,
      new RegExp(
        `^ +${treeId} {2}pending {3}tree {3}goal 1 "Ship the release notes" {2}by owner {2}\\(3 tasks, 1 command on the host\\)$`,
      ),
    );
    const listed = json(['proposals', 'list']) as unknown as Body[];
    assert.deepEqual(
      listed.map((p) => [p.id, p.kind, p.status, p.commands]),
      [
        [agentProposal, 'agent', 'pending', [BACKEND]],
        [treeId, 'tree', 'pending', [commandLine()]],
      ],
    );
    assert.equal(run(['proposals', 'list', '--status', 'rejected']), 'No rejected proposals\n');
  });

  it('shows a tree proposal: every command line in full first, then the outline, hostile titles escaped', () => {
    const out = run(['proposals', 'show', String(treeId)]);
    const lines = out.trimEnd().split('\n');
    assert.equal(lines[0], `Proposal ${treeId} — task tree (3 tasks) for goal 1 "Ship the release notes" — pending`);
    const head = lines.indexOf('Commands approving it runs on this host (your verifier recipes), in full:');
    assert.ok(head > 0, out);
    assert.equal(lines[head + 1], `  * ${commandLine()}`);
    assert.equal(lines.filter((l) => l.startsWith('  * ')).length, 1, 'a title cannot add a line to the command list');
    assert.ok(lines.indexOf('Tree:') > head + 1);
    assert.ok(lines.includes('  - Audit the docs [5000 tokens] (verifier: auto)'), out);
    assert.ok(
      lines.includes(
        '    - Audit \\u001b[2Jthe guide\\u000a  * recipe "evil": sh -c "rm -rf /" (verifier: command recipe "lint")',
      ),
      out,
    );
    assert.ok(lines.includes('    - Audit the API reference (verifier: auto)'), out);
    assert.ok(lines.includes(`Decide: colony approve ${treeId}  |  colony reject ${treeId} --reason TEXT`));
    assert.doesNotMatch(out, /\u001b/);
    const shown = json(['proposals', 'show', String(treeId)]);
    assert.deepEqual(
      [shown.id, shown.kind, shown.commands, (shown.tree as Body).title],
      [treeId, 'tree', [commandLine()], 'Audit the docs'],
    );
  });

  it('shows an agent proposal with the backend it inherits', () => {
    const out = run(['proposals', 'show', String(agentProposal)]);
    assert.match(
      out,
      new RegExp(`^Proposal ${agentProposal} — agent for goal 3 "Write the API pages" — pending$`, 'm'),
    );
    assert.match(
      out,
      /^Commands approving it runs on this host \(the backend it inherits from its proposer\), in full:\n {2}\* lead-backend --fast --profile docs$/m,
    );
    assert.match(out, /^Agent: api-writer, model test-model, tier supervised, tools whoami$/m);
    assert.match(out, /^Reason: The endpoints need a dedicated writer\.$/m);
  });

  it("goals show prints the goal's pending proposal with its commands and tree", () => {
    const out = run(['goals', 'show', '1']);
    assert.match(out, new RegExp(`^Pending:\\n {2}Proposal ${treeId} — task tree \\(3 tasks\\)`, 'm'));
    assert.ok(out.includes(`\n    * ${commandLine()}\n`), out);
    assert.ok(out.includes('\n      - Audit the API reference (verifier: auto)\n'), out);
    const other = run(['goals', 'show', '3']);
    assert.doesNotMatch(other, /Proposal \d+ — task tree/, "goal 3's tree was approved");
    assert.match(
      other,
      new RegExp(`^ {2}Proposal ${agentProposal} — agent for goal 3`, 'm'),
      'its agent proposal waits',
    );
  });

  it('approve prints what it did and every command line, the same list show printed', () => {
    const out = run(['approve', String(treeId)]);
    assert.match(
      out,
      new RegExp(
        `^Approved proposal ${treeId}: created tasks \\d+, \\d+, \\d+\\nCommands it runs on this host \\(your verifier recipes\\):\\n {2}${escape(commandLine())}\\n$`,
      ),
    );
    const agent = json(['approve', String(agentProposal)]);
    assert.deepEqual([agent.status, agent.commands, agent.task_ids], ['approved', [BACKEND], []]);
    assert.match(
      agent.summary as string,
      new RegExp(
        `^Approved proposal ${agentProposal}: created agent api-writer \\(id ${agent.agent_id}\\)\\nCommands it runs on this host \\(the backend it inherits from its proposer\\):\\n {2}${escape(BACKEND)}$`,
      ),
    );
    assert.equal(run(['proposals', 'list']), 'No pending proposals\n');
    const decided = run(['proposals', 'show', String(treeId)]);
    assert.match(decided, /^Decided by owner at \d{4}-/m);
    assert.doesNotMatch(decided, /^Decide: /m);
    assert.deepEqual(
      (json(['proposals', 'list', '--status', 'approved']) as unknown as Body[]).map((p) => p.id),
      [agentProposal, treeId + 1, treeId, 1],
    );
  });

  it('reject answers in one line', () => {
    const p = withApp((app) =>
      proposeTaskTree(
        app,
        owner,
        1,
        '',
        { title: 'One more pass', description: 'Read every page once more.' },
        { actor: 'user:owner' },
      ),
    );
    assert.equal(
      run(['reject', String(p.proposalId), '--reason', 'Not now']),
      `Rejected proposal ${p.proposalId}; the proposer was told why\n`,
    );
    assert.deepEqual(
      (json(['proposals', 'list', '--status', 'rejected']) as unknown as Body[]).map((r) => [r.id, r.reason]),
      [[p.proposalId, 'Not now']],
    );
    colonyFails(
      dir,
      ['approve', String(p.proposalId)],
      /^colony: ErrProposalDecided: proposal \d+ was already rejected$/,
    );
    colonyFails(
      dir,
      ['approve', String(agentProposal)],
      /^colony: ErrProposalDecided: proposal \d+ was already approved$/,
    );
  });

  it('refuses unknown and malformed ids and statuses with one line', () => {
    colonyFails(dir, ['proposals', 'show', '999'], /^colony: proposal 999 not found$/);
    colonyFails(dir, ['proposals', 'show', 'abc'], /^colony: proposal id must be a positive integer, not "abc"$/);
    colonyFails(
      dir,
      ['proposals', 'list', '--status', 'open'],
      /^colony: --status must be one of pending, approved, rejected, not "open"$/,
    );
    for (const cmd of [
      ['proposals', 'list'],
      ['proposals', 'show'],
      ['goals', 'create'],
    ])
      assert.match(colony([...cmd, '--help']).stdout, /Usage: colony/);
  });
});

/** One call as the lead agent, through its own MCP client over `colony stdio`: the proposal's id. */
async function asLead(fn: (client: Client) => Promise<unknown>): Promise<number> {
  const client = await stdioClient(dir, leadToken);
  try {
    const r = (await fn(client)) as CallToolResult;
    assert.ok(!r.isError, JSON.stringify(r.content));
    return (r.structuredContent as Body).proposal_id as number;
  } finally {
    await client.close();
  }
}

/** The recipe as every surface shows it, in full. */
function commandLine(): string {
  return `recipe "lint": sh -c ${JSON.stringify(LINT)} in the task's project, else the assignee's working directory (read-only), timeout 60s`;
}
const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
