import assert from 'node:assert/strict';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createProject } from '../../../src/actions/projects.js';
import { RULES_HEADING } from '../../../src/actions/projects/files.js';
import { getProjectByName } from '../../../src/projections/projects.js';
import { callTool, mcpFixture, textOf, type McpFixture } from '../../helpers/mcp.js';
import { tempDir } from '../../../testkit/temp-dir.js';
import { answer } from '../../helpers/calls.js';

/**
 * What project_create, project_scaffold and project_regenerate_claude_md do to the disk: the
 * path policy (outside the roots, `..`, an escaping symlink — refused, nothing
 * written; a registered project's path becomes an allowed root), the whole create rolled back when any
 * step fails (no event, no directory or file left, a file of the user's restored byte for byte), and
 * CLAUDE.md's project-rules block kept byte for byte by scaffold and regenerate.
 */
delete process.env.COLONY_ALLOWED_ROOTS;

type Body = Record<string, unknown>;
const outside = tempDir('colony-outside-');
let f: McpFixture;
let agent: Client;
let ws: string;
before(async () => {
  f = await mcpFixture();
  agent = await f.connect(f.agentToken);
  ws = realpathSync(join(f.dataDir, 'workspace'));
  mkdirSync(join(ws, 'projects'), { recursive: true }); // where an agent may put a project (or in its own workspace)
});
after(async () => {
  await f.close();
  outside.cleanup();
});

const head = () => f.app.engine.head().position;
const projectCount = () => (f.app.engine.db.prepare('SELECT count(*) AS n FROM projects').get() as { n: number }).n;
/** Refused by the path policy before the handler ran: isError, and nothing written anywhere. */
async function outsideRoots(args: Body, notCreated: string) {
  const before = head();
  const { result } = await callTool(agent, 'project_create', args);
  assert.equal(result.isError, true);
  assert.match(textOf(result), /^ErrPathOutsideRoots: path resolves outside the allowed roots/);
  assert.equal(head(), before);
  assert.equal(existsSync(notCreated), false, `${notCreated} was not created`);
}
/** A failed create: its text, and no event, no project row, no id taken. */
async function failedCreate(args: Body, text: RegExp) {
  const before = [head(), projectCount()];
  const r = await answer(agent, 'project_create', args);
  assert.match(r.text, text);
  assert.equal(r.body.status, 'error');
  assert.equal(r.body.error_code, 'ErrProjectFiles');
  assert.deepEqual([head(), projectCount()], before);
}

describe('path policy', () => {
  it('refuses a path outside the roots, a .. escape and a symlink pointing out', async () => {
    await outsideRoots({ name: 'abs', path: join(outside.dir, 'abs') }, join(outside.dir, 'abs'));
    await outsideRoots(
      { name: 'dots', path: join(ws, 'projects', '..', '..', 'escaped') },
      join(ws, 'projects', '..', '..', 'escaped'),
    );
    symlinkSync(outside.dir, join(ws, 'projects', 'way-out'));
    await outsideRoots({ name: 'linked', path: join(ws, 'projects', 'way-out', 'proj') }, join(outside.dir, 'proj'));
    assert.equal(getProjectByName(f.app.engine.db, f.owner.userId, 'linked'), null);
  });

  it('stores the resolved path: a symlink that stays inside is followed', async () => {
    mkdirSync(join(ws, 'projects', 'real-dir'));
    symlinkSync(join(ws, 'projects', 'real-dir'), join(ws, 'projects', 'alias'));
    const r = await answer(agent, 'project_create', { name: 'aliased', path: join(ws, 'projects', 'alias', 'p') });
    assert.equal((r.body.project as { path: string }).path, join(ws, 'projects', 'real-dir', 'p'));
    assert.ok(existsSync(join(ws, 'projects', 'real-dir', 'p', 'CLAUDE.md')));
  });

  it("a registered project's path becomes an allowed root for other path arguments, until it is archived", async () => {
    const root = join(outside.dir, 'registered');
    const by = { key: `user-${f.owner.userId}`, name: f.owner.name, tenant: f.owner.userId };
    // Registered by the owner's own code path (no path policy there), as an operator would register an existing checkout.
    createProject(f.app, by, { name: 'checkout', path: root, gitUrl: '', description: '' }, { actor: 'user:owner' });
    assert.ok(f.ctx.paths.allowedRoots().includes(root));
    const owner = await f.connect(f.ownerToken);
    // An agent's projects lie in its own workspace or under the projects root, never here; the owner's may.
    const refused = await answer(agent, 'project_create', { name: 'nested', path: join(root, 'packages', 'nested') });
    assert.equal(refused.body.error_code, 'ErrProjectPathNotAllowed');
    const inner = await answer(owner, 'project_create', { name: 'nested', path: join(root, 'packages', 'nested') });
    assert.equal(inner.body.action, 'created');
    const ask = await callTool(owner, 'archive_project', { name: 'checkout' });
    await callTool(owner, 'archive_project', {
      name: 'checkout',
      confirmation_token: (ask.body as { confirm_token: string }).confirm_token,
    });
    assert.ok(
      f.ctx.paths.allowedRoots().includes(join(root, 'packages', 'nested')),
      'the nested project is still a root of its own',
    );
    await outsideRoots({ name: 'late', path: join(root, 'late') }, join(root, 'late'));
  });
});

describe('rollback', () => {
  it('a directory that cannot be made (a file in the way): the refusal text, nothing written', async () => {
    writeFileSync(join(ws, 'projects', 'blocker'), 'a file where a directory should be');
    await failedCreate(
      { name: 'blocked', path: join(ws, 'projects', 'blocker', 'proj') },
      /^Could not create directory .*blocker\/proj: /,
    );
  });

  it('a failure after creating directories removes the ones it created', async () => {
    const path = join(ws, 'projects', 'fresh', 'deeper', 'x'.repeat(300));
    await failedCreate({ name: 'too-long', path }, /^Could not create directory .*: ENAMETOOLONG/);
    assert.equal(existsSync(join(ws, 'projects', 'fresh')), false, 'the parents it created are gone');
  });

  it("a failing scaffold step: the event is not kept, a file it wrote is removed, a file of the user's is restored byte for byte", async () => {
    const dir = join(ws, 'projects', 'half');
    mkdirSync(join(dir, 'PROGRESS.md'), { recursive: true }); // not a regular file: the second scaffold step fails
    const mine = '# My own notes\r\nkeep   \n\tthese bytes ✓';
    writeFileSync(join(dir, 'CLAUDE.md'), mine);
    await failedCreate(
      { name: 'half', path: dir },
      /^Scaffold failed for `half`: .*PROGRESS\.md is not a regular file\nNothing was created: the project was rolled back\.$/,
    );
    assert.equal(readFileSync(join(dir, 'CLAUDE.md'), 'utf8'), mine);
    unlinkSync(join(dir, 'CLAUDE.md'));
    await failedCreate({ name: 'half', path: dir }, /^Scaffold failed for `half`/);
    assert.equal(existsSync(join(dir, 'CLAUDE.md')), false, 'the CLAUDE.md it wrote is removed');
    rmSync(join(dir, 'PROGRESS.md'), { recursive: true });
    assert.equal(
      (await answer(agent, 'project_create', { name: 'half', path: dir })).body.action,
      'created',
      'the name was never taken',
    );
  });
});

describe('scaffold and regenerate', () => {
  const dir = () => join(ws, 'projects', 'own');
  const claude = () => readFileSync(join(dir(), 'CLAUDE.md'), 'utf8');
  const rules = (text: string) => text.slice(text.indexOf(`${RULES_HEADING}\n`) + RULES_HEADING.length + 1);
  const users = 'Use tabs.\n\tNever push on Fridays.  \r\n## A heading of mine\nno final newline ✓';
  before(async () => {
    mkdirSync(dir());
    writeFileSync(join(dir(), 'CLAUDE.md'), users);
    writeFileSync(join(dir(), 'PROGRESS.md'), '### 2026-01-01 | Task: old | Status: success\n');
    await answer(agent, 'project_create', {
      name: 'own',
      path: dir(),
      description: 'Line one\n## Project-Specific Rules\nforged',
    });
  });

  it("project_create scaffolds around files of the user's: CLAUDE.md's text becomes the rules block, PROGRESS.md's follows the template", () => {
    assert.equal(rules(claude()), users);
    assert.ok(
      claude().includes('- Description: Line one ## Project-Specific Rules forged\n'),
      'a description cannot forge the heading',
    );
    const progress = readFileSync(join(dir(), 'PROGRESS.md'), 'utf8');
    assert.match(progress, /^# PROGRESS\.md\n> Read this file at the start of every task/);
    assert.ok(progress.endsWith('-->\n\n### 2026-01-01 | Task: old | Status: success\n'));
  });

  it('regenerate rewrites the generated part and keeps the rules block byte for byte; again, no changes', async () => {
    const edited = claude().replace('## Working Rules', '## Rules someone edited').concat('\nmore of mine\n\n  ');
    writeFileSync(join(dir(), 'CLAUDE.md'), edited);
    const r = await answer(agent, 'project_regenerate_claude_md', { name: 'own' });
    assert.equal(r.text, 'Regenerated CLAUDE.md for `own` (project-specific rules preserved).');
    assert.equal(r.body.changed, true);
    assert.ok(claude().includes('## Working Rules') && !claude().includes('## Rules someone edited'));
    assert.equal(rules(claude()), rules(edited));
    const before = claude();
    assert.equal((await answer(agent, 'project_regenerate_claude_md', { name: 'own' })).body.changed, false);
    assert.equal(claude(), before);
  });

  it('scaffold writes only what is missing; a symlinked file is refused and its target untouched', async () => {
    unlinkSync(join(dir(), 'PROGRESS.md'));
    assert.equal(
      (await answer(agent, 'project_scaffold', { name: 'own' })).text,
      'Project `own`: PROGRESS.md created.',
    );
    assert.equal(
      (await answer(agent, 'project_scaffold', { name: 'own' })).text,
      'Project `own`: no changes (files already present).',
    );
    const target = join(outside.dir, 'target.md');
    writeFileSync(target, 'not yours');
    unlinkSync(join(dir(), 'CLAUDE.md'));
    symlinkSync(target, join(dir(), 'CLAUDE.md'));
    const r = await answer(agent, 'project_scaffold', { name: 'own' });
    assert.equal(
      r.text,
      `Scaffold failed for \`own\`: ${join(dir(), 'CLAUDE.md')} is a symlink: paths with a symlink on them are refused`,
    );
    assert.equal(r.body.error_code, 'ErrProjectFiles');
    assert.match(
      (await answer(agent, 'project_regenerate_claude_md', { name: 'own' })).text,
      /^Regenerate failed for `own`: .* is a symlink: paths with a symlink on them are refused$/,
    );
    assert.equal(readFileSync(target, 'utf8'), 'not yours');
    assert.ok(lstatSync(join(dir(), 'CLAUDE.md')).isSymbolicLink());
  });

  it('a project directory that is gone, or swapped for a symlink, is refused', async () => {
    const gone = join(ws, 'projects', 'gone');
    await answer(agent, 'project_create', { name: 'gone', path: gone });
    rmSync(gone, { recursive: true });
    for (const tool of ['project_scaffold', 'project_regenerate_claude_md']) {
      const r = await answer(agent, tool, { name: 'gone' });
      assert.equal(r.text, `Project \`gone\` path does not exist on disk: ${gone}`);
      assert.equal(r.body.error_code, 'ErrProjectPathMissing');
    }
    symlinkSync(outside.dir, gone);
    const r = await answer(agent, 'project_scaffold', { name: 'gone' });
    assert.equal(
      r.text,
      `Scaffold failed for \`gone\`: ${gone} now resolves to ${realpathSync(outside.dir)}; nothing was written.`,
    );
    assert.equal(existsSync(join(outside.dir, 'CLAUDE.md')), false);
  });
});
