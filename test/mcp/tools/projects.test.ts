import assert from 'node:assert/strict';
import { existsSync, mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { archiveProject, createProject } from '../../../src/actions/projects.js';
import { FORBIDDEN_AGENT_VERBS } from '../../../src/mcp/tool.js';
import { getProjectByName, listProjects, projectForPath, type ProjectRow } from '../../../src/projections/projects.js';
import { callTool, mcpFixture, textOf, type McpFixture } from '../../helpers/mcp.js';
import { answer, refusedWithText } from '../../helpers/calls.js';

/**
 * Projects over a real MCP Client: project_create's idempotency on the name and its
 * re-activation of an archived project, the name checks, the default path, archive_project (owner only,
 * one-use confirmation token), the tenant scope, the cwd inference (projectForPath), and the safety rule
 * seen from a client: no tool an agent can list has a forbidden verb in its name (test/mcp/tools/index.test.ts
 * checks the same over the whole registry).
 */
delete process.env.COLONY_ALLOWED_ROOTS;

type Body = Record<string, unknown>;
let f: McpFixture;
let owner: Client;
let agent: Client;
let ws: string;
before(async () => {
  f = await mcpFixture();
  owner = await f.connect(f.ownerToken);
  agent = await f.connect(f.agentToken);
  ws = realpathSync(join(f.dataDir, 'workspace'));
  mkdirSync(join(ws, 'projects'), { recursive: true }); // where an agent may put a project (or in its own workspace)
});
after(() => f.close());

const head = () => f.app.engine.head().position;
/** A destructive owner tool: ask (nothing written), then confirm with the one-use token. */
async function confirmed(c: Client, name: string, args: Body) {
  const before = head();
  const { result, body } = await callTool(c, name, args);
  assert.equal(body.confirmation_required, true, textOf(result));
  assert.equal(head(), before, 'asking for confirmation writes nothing');
  return {
    token: body.confirm_token as string,
    ...(await answer(c, name, { ...args, confirmation_token: body.confirm_token })),
  };
}

describe('project_create', () => {
  it("checks the name in xylocopa's order: pattern, then length; nothing is written", async () => {
    await refusedWithText(
      f,
      agent,
      'project_create',
      { name: '-dash-first' },
      'Invalid project name `-dash-first`. Must start with alphanumeric and contain only [a-zA-Z0-9._-].',
      'ErrInvalidName',
    );
    await refusedWithText(
      f,
      agent,
      'project_create',
      { name: '.hidden' },
      'Invalid project name `.hidden`. Must start with alphanumeric and contain only [a-zA-Z0-9._-].',
      'ErrInvalidName',
    );
    await refusedWithText(
      f,
      agent,
      'project_create',
      { name: `a/${'b'.repeat(200)}` },
      `Invalid project name \`a/${'b'.repeat(200)}\`. Must start with alphanumeric and contain only [a-zA-Z0-9._-].`,
      'ErrInvalidName',
    );
    await refusedWithText(
      f,
      agent,
      'project_create',
      { name: 'x'.repeat(101) },
      'Project name too long: 101 chars (max 100).',
      'ErrInvalidName',
    );
  });

  it('defaults the path to <data>/workspace/projects/<name>, for an omitted path and for path=""', async () => {
    const a = await answer(agent, 'project_create', { name: 'defaulted' });
    assert.equal((a.body.project as ProjectRow & { path: string }).path, join(ws, 'projects', 'defaulted'));
    assert.ok(existsSync(join(ws, 'projects', 'defaulted', 'CLAUDE.md')));
    const b = await answer(agent, 'project_create', { name: 'blank.path_1', path: '' });
    assert.equal((b.body.project as { path: string }).path, join(ws, 'projects', 'blank.path_1'));
    assert.deepEqual(b.body.scaffolded, { claude_md: true, progress_md: true });
  });

  it('is idempotent on the name: an active project answers "already exists" and appends nothing', async () => {
    const path = join(ws, 'projects', 'idem');
    const first = await answer(agent, 'project_create', {
      name: 'idem',
      path,
      git_url: 'git@example.com:team/idem.git',
    });
    assert.equal(first.body.action, 'created');
    assert.equal(
      first.text,
      `Created project \`idem\`.\nPath: ${path}\nGit: git@example.com:team/idem.git\nScaffolded CLAUDE.md and PROGRESS.md if missing.`,
    );
    const before = head();
    const again = await answer(agent, 'project_create', {
      name: 'idem',
      path: join(ws, 'projects', 'elsewhere'),
      description: 'ignored',
    });
    assert.equal(again.text, `Project \`idem\` already exists (active).\nPath: ${path}\nNo changes made.`);
    assert.equal(again.body.action, 'exists');
    assert.equal(head(), before);
    assert.equal(existsSync(join(ws, 'projects', 'elsewhere')), false, 'the other path was not created');
    assert.equal(getProjectByName(f.app.engine.db, f.owner.userId, 'idem')!.description, null);
  });
  it('a retried idempotency key returns the first result and appends nothing', async () => {
    const args = {
      name: 'project_create',
      arguments: { name: 'keyed' },
      _meta: { 'colony/idempotency_key': 'create-keyed-1' },
    };
    const first = await agent.callTool(args);
    const before = head();
    const again = await agent.callTool(args);
    assert.deepEqual([textOf(again as never), head()], [textOf(first as never), before]);
    assert.equal((again.structuredContent as Body).action, 'created');
  });
});

describe('archive_project and re-activation', () => {
  const path = () => join(ws, 'projects', 'shelf');
  before(async () => {
    await answer(agent, 'project_create', { name: 'shelf', path: path(), description: 'Kept description' });
  });

  it('is not visible to agents, and refused if called anyway', async () => {
    assert.ok(!(await agent.listTools()).tools.some((t) => t.name === 'archive_project'));
    const before = head();
    const r = await agent.callTool({ name: 'archive_project', arguments: { name: 'shelf' } });
    assert.equal(r.isError, true);
    assert.match(textOf(r as never), /^ErrToolNotFound: /);
    assert.equal(head(), before);
  });

  it('owner: the first call asks for confirmation, the second with the token archives, the token is used up', async () => {
    const tool = (await owner.listTools()).tools.find((t) => t.name === 'archive_project')!;
    assert.equal(tool.annotations?.destructiveHint, true);
    assert.ok('confirmation_token' in (tool.inputSchema.properties ?? {}));
    const r = await confirmed(owner, 'archive_project', { name: 'shelf' });
    assert.equal(
      r.text,
      `Archived project \`shelf\`.\nPath: ${path()} (its files stay on disk)\nproject_create with the same name re-activates it.`,
    );
    assert.equal(r.body.archived, true);
    assert.ok(existsSync(join(path(), 'CLAUDE.md')), 'files stay');
    const reused = await owner.callTool({
      name: 'archive_project',
      arguments: { name: 'shelf', confirmation_token: r.token },
    });
    assert.match(textOf(reused as never), /^ErrConfirmationInvalid: /);
    const again = await confirmed(owner, 'archive_project', { name: 'shelf' });
    assert.equal(again.text, 'Project `shelf` is already archived.\nNo changes made.');
    const missing = await confirmed(owner, 'archive_project', { name: 'nope' });
    assert.match(missing.text, /^Project `nope` not found\.\nAvailable: /);
  });

  it('an archived project leaves the list (include_archived shows it after the active ones) and is marked', async () => {
    assert.ok(!(await answer(agent, 'project_list')).text.includes('shelf'));
    const all = await answer(agent, 'project_list', { include_archived: true });
    const names = (all.body.projects as { name: string; archived: boolean }[]).map((p) => [p.name, p.archived]);
    assert.deepEqual(names.at(-1), ['shelf', true]);
    assert.ok(all.text.includes(`- **shelf** [ARCHIVED] — \`${path()}\``));
    assert.match((await answer(agent, 'project_get', { name: 'shelf' })).text, /^# Project: shelf \[ARCHIVED\]\n/);
    await refusedWithText(
      f,
      agent,
      'project_scaffold',
      { name: 'shelf' },
      'Project `shelf` is archived: project_create re-activates it.',
      'ErrProjectArchived',
    );
  });

  it('project_create re-activates it: the path argument is ignored, only empty fields are filled', async () => {
    const r = await answer(agent, 'project_create', {
      name: 'shelf',
      path: join(ws, 'projects', 'other-place'),
      git_url: 'https://git.example/shelf',
      description: 'New description',
    });
    assert.equal(r.text, `Project \`shelf\` re-activated from archive.\nPath: ${path()}`);
    assert.equal(r.body.action, 'reactivated');
    const p = r.body.project as { path: string; git_remote: string; description: string; archived: boolean };
    assert.deepEqual(
      [p.path, p.git_remote, p.description, p.archived],
      [path(), 'https://git.example/shelf', 'Kept description', false],
    );
    assert.equal(existsSync(join(ws, 'projects', 'other-place')), false);
    const before = head();
    assert.match((await answer(agent, 'project_create', { name: 'shelf' })).text, /already exists \(active\)/);
    assert.equal(head(), before);
  });
});

describe('tenant scope', () => {
  it('another owner sees none of these projects and may use the same names', async () => {
    const rival = await f.connect(f.addOwner('rival').token);
    assert.equal((await answer(rival, 'project_list', { include_archived: true })).text, 'No projects found.');
    await refusedWithText(
      f,
      rival,
      'project_get',
      { name: 'idem' },
      'Project `idem` not found.\nAvailable: (none)',
      'ErrProjectNotFound',
    );
    const mine = await answer(rival, 'project_create', { name: 'idem', path: join(ws, 'projects', 'rival-idem') });
    assert.equal(mine.body.action, 'created');
    assert.equal(listProjects(f.app.engine.db, f.owner.userId, false).filter((p) => p.name === 'idem').length, 1);
  });
});

describe('cwd inference (projectForPath)', () => {
  it('picks the project whose path is the cwd or its nearest ancestor; never a sibling prefix or an archived one', () => {
    const db = f.app.engine.db;
    const by = { key: `user-${f.owner.userId}`, name: f.owner.name, tenant: f.owner.userId };
    const make = (name: string, path: string) =>
      createProject(f.app, by, { name, path, gitUrl: '', description: '' }, { actor: 'user:owner' }).project;
    const outer = make('outer', join(ws, 'projects', 'tree'));
    const inner = make('inner', join(ws, 'projects', 'tree', 'sub'));
    make('sibling', join(ws, 'projects', 'tree-2'));
    const at = (cwd: string) => projectForPath(db, f.owner.userId, cwd)?.name ?? null;
    assert.equal(at(join(ws, 'projects', 'tree')), 'outer');
    assert.equal(at(join(ws, 'projects', 'tree', 'src', 'x')), 'outer');
    assert.equal(at(join(ws, 'projects', 'tree', 'sub')), 'inner');
    assert.equal(at(join(ws, 'projects', 'tree', 'sub', 'deep') + '/'), 'inner');
    assert.equal(at(join(ws, 'projects', 'tree-2', 'a')), 'sibling');
    assert.equal(at(join(ws, 'projects', 'tre')), null);
    assert.equal(projectForPath(db, f.owner.userId + 99, join(ws, 'projects', 'tree')), null, 'another tenant');
    archiveProject(f.app, by, 'inner', { actor: 'user:owner' });
    assert.equal(at(join(ws, 'projects', 'tree', 'sub')), 'outer', 'archived projects do not count');
    assert.equal(make('inner', '').projectId, inner.projectId, 're-activated');
    assert.equal(at(join(ws, 'projects', 'tree', 'sub')), 'inner');
    assert.equal(outer.path, join(ws, 'projects', 'tree'));
  });
});

describe('safety', () => {
  it('no tool an agent can list has a forbidden verb in its name; the project tools are on the agent surface with explicit trust', async () => {
    const tools = (await agent.listTools()).tools;
    const offenders = tools.filter((t) => FORBIDDEN_AGENT_VERBS.some((verb) => t.name.includes(verb)));
    assert.deepEqual(
      offenders.map((t) => t.name),
      [],
    );
    const hints = tools
      .filter((t) => t.name.startsWith('project_') || t.name === 'system_health')
      .map((t) => [t.name, t.annotations?.readOnlyHint]);
    assert.deepEqual(hints.sort(), [
      ['project_create', false],
      ['project_get', true],
      ['project_list', true],
      ['project_regenerate_claude_md', false],
      ['project_scaffold', false],
      ['system_health', true],
    ]);
  });
});

describe('the projects projection', () => {
  it('rebuilds from the log to the same rows', () => {
    const rows = () => f.app.engine.db.prepare('SELECT * FROM projects ORDER BY project_id').all();
    const live = rows();
    assert.ok(live.length >= 5);
    f.app.engine.rebuild(['projects']);
    assert.deepEqual(rows(), live);
  });
});
