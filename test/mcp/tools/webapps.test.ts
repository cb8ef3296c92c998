import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { configureSandbox, setAgentProject } from '../../../src/actions/runs/agent-controls.js';
import { archiveProject, createProject } from '../../../src/actions/projects.js';
import { fixedClock } from '../../../src/clock.js';
import { getMessage } from '../../../src/projections/channel-queries.js';
import { mcpFixture, type McpFixture } from '../../helpers/mcp.js';
import { speakerOf } from '../../../src/actions/principals.js';
import { answer, refusedWithText } from '../../helpers/calls.js';

/**
 * xylocopa's webapp_present and webapp_list over a real MCP Client:
 * the checks in xylocopa's order with its texts, kind detection, the static path policy (absolute path
 * elsewhere, `../`, an escaping symlink, a missing file — each refused with nothing appended), the
 * lstrip("./") quirk fixed, the port range and Colony's own port, http(s)-only links, the upsert, the
 * card message (here a DM to the owner: the agent has no running run) and webapp_list's texts.
 */
delete process.env.COLONY_ALLOWED_ROOTS;
delete process.env.COLONY_PORT;
const T0 = '2026-03-05T15:07:00.000Z';
const clock = fixedClock(T0);
const actor = { actor: 'user:owner' };

let f: McpFixture;
let owner: Client;
let worker: Client;
let dir: string;
let outside: string;
before(async () => {
  f = await mcpFixture({ clock });
  owner = await f.connect(f.ownerToken);
  worker = await f.connect(f.agentToken);
  const ownerSpeaker = speakerOf(f.app, `user-${f.owner.userId}`);
  dir = createProject(f.app, ownerSpeaker, { name: 'site', path: '', gitUrl: '', description: '' }, actor).project.path;
  setAgentProject(f.app, f.owner.userId, f.agent.agentId, 'site', 'owner', actor);
  // It serves its ports on the host's loopback (network host): a confined agent presents none (test/security/port-apps.test.ts).
  configureSandbox(f.app, f.owner.userId, f.agent.agentId, { network: 'host' }, 'owner', actor);
  outside = realpathSync(mkdtempSync(join(tmpdir(), 'colony-outside-')));
  writeFileSync(join(outside, 'secret.html'), '<p>secret</p>');
  for (const sub of ['.hidden', 'dir', 'sub']) mkdirSync(join(dir, sub));
  for (const file of ['index.html', '.hidden/x.html', 'dir/index.html', 'sub/page.htm', 'notes.txt'])
    writeFileSync(join(dir, file), `<p>${file}</p>`);
  symlinkSync(join(outside, 'secret.html'), join(dir, 'escape.html'));
  symlinkSync(outside, join(dir, 'escape-dir'));
});
after(async () => {
  await f.close();
  rmSync(outside, { recursive: true, force: true });
});

type App = {
  app_id: string;
  kind: string;
  target: string;
  title: string;
  description: string;
  url: string;
  message_id: number;
  last_presented_at: string;
};
const appOf = (body: Record<string, unknown>): App => body.app as App;

describe("webapp_present: checks in xylocopa's order", () => {
  it('target, then kind, then the caller, then its project', async () => {
    await refusedWithText(
      f,
      worker,
      'webapp_present',
      { target: '   ', kind: 'iframe' },
      'Error: target is required.',
      'ErrInvalidInput',
    );
    await refusedWithText(
      f,
      owner,
      'webapp_present',
      { target: 'index.html', kind: 'iframe' },
      "Error: kind must be one of ('static', 'port', 'url').",
      'ErrInvalidInput',
    );
    await refusedWithText(
      f,
      owner,
      'webapp_present',
      { target: '/etc/passwd' },
      "Error: could not identify the calling agent (this is an owner token, not an agent's). Pass agent_id explicitly.",
      'ErrUnknownCaller',
    );
    await refusedWithText(
      f,
      owner,
      'webapp_present',
      { target: 'index.html', agent_id: 'ghost' },
      'Error: agent ghost not found.',
      'ErrNotFound',
    );
    await refusedWithText(
      f,
      owner,
      'webapp_present',
      { target: 'index.html', agent_id: '999' },
      'Error: agent 999 not found.',
      'ErrNotFound',
    );
    await refusedWithText(
      f,
      worker,
      'webapp_present',
      { target: 'index.html', agent_id: 'ghost' },
      'Error: agent ghost not found.',
      'ErrNotFound',
    );
    const loner = f.addAgent('loner');
    await refusedWithText(
      f,
      worker,
      'webapp_present',
      { target: 'index.html', agent_id: 'loner' },
      'Error: agent_id names another agent — an agent presents web apps as itself.',
      'ErrForbidden',
    );
    await refusedWithText(
      f,
      await f.connect(loner.token),
      'webapp_present',
      { target: '../../etc/x.html' },
      'Error: agent loner has no project. Its owner assigns one first: colony agents runtime loner --project NAME.',
      'ErrNoProject',
    );
  });

  it('an agent of another tenant is not found; an archived project is refused', async () => {
    const other = f.addOwner('stranger');
    const theirs = f.addAgent('theirs', { ownerId: other.userId });
    await refusedWithText(
      f,
      owner,
      'webapp_present',
      { target: 'index.html', agent_id: String(theirs.agentId) },
      `Error: agent ${theirs.agentId} not found.`,
      'ErrNotFound',
    );
    const by = speakerOf(f.app, `user-${f.owner.userId}`);
    createProject(f.app, by, { name: 'old', path: '', gitUrl: '', description: '' }, actor);
    const retiree = f.addAgent('retiree');
    setAgentProject(f.app, f.owner.userId, retiree.agentId, 'old', 'owner', actor);
    archiveProject(f.app, by, 'old', actor);
    await refusedWithText(
      f,
      owner,
      'webapp_present',
      { target: 'CLAUDE.md', agent_id: 'retiree' },
      'Error: project old is archived — project_create re-activates it.',
      'ErrProjectArchived',
    );
  });

  it('a project directory swapped for a symlink serves nothing (it would widen "inside the project")', async () => {
    const by = speakerOf(f.app, `user-${f.owner.userId}`);
    const moved = createProject(f.app, by, { name: 'moved', path: '', gitUrl: '', description: '' }, actor).project
      .path;
    const mover = f.addAgent('mover');
    setAgentProject(f.app, f.owner.userId, mover.agentId, 'moved', 'owner', actor);
    renameSync(moved, `${moved}-real`);
    symlinkSync(`${moved}-real`, moved);
    await refusedWithText(
      f,
      owner,
      'webapp_present',
      { target: 'CLAUDE.md', agent_id: 'mover' },
      `Error: project moved directory is missing or was replaced by a link (${moved}).`,
      'ErrProjectPathMissing',
    );
  });
});

describe('webapp_present: static targets stay inside the project', () => {
  const outsideText = (t: string) =>
    `Error: ${t} is outside project site (${dir}) — static apps must live inside the project directory.`;
  it('refuses an absolute path elsewhere, ../, and a symlink that escapes — nothing appended', async () => {
    await refusedWithText(
      f,
      worker,
      'webapp_present',
      { target: join(outside, 'secret.html') },
      outsideText(join(outside, 'secret.html')),
      'ErrPathOutsideRoots',
    );
    await refusedWithText(
      f,
      worker,
      'webapp_present',
      { target: '../other/index.html' },
      outsideText('../other/index.html'),
      'ErrPathOutsideRoots',
    );
    await refusedWithText(
      f,
      worker,
      'webapp_present',
      { target: 'sub/../../x.html' },
      outsideText('sub/../../x.html'),
      'ErrPathOutsideRoots',
    );
    await refusedWithText(
      f,
      worker,
      'webapp_present',
      { target: 'escape.html' },
      outsideText('escape.html'),
      'ErrPathOutsideRoots',
    );
    await refusedWithText(
      f,
      worker,
      'webapp_present',
      { target: 'escape-dir/secret.html' },
      outsideText('escape-dir/secret.html'),
      'ErrPathOutsideRoots',
    );
    await refusedWithText(
      f,
      worker,
      'webapp_present',
      { target: '/etc/hostname', kind: 'static' },
      outsideText('/etc/hostname'),
      'ErrPathOutsideRoots',
    );
  });

  it('refuses a missing file, a directory and a file that is not .html/.htm', async () => {
    await refusedWithText(
      f,
      worker,
      'webapp_present',
      { target: 'nope.html' },
      'Error: nope.html not found in project site. Create the file first.',
      'ErrNotFound',
    );
    await refusedWithText(
      f,
      worker,
      'webapp_present',
      { target: 'dir' },
      'Error: dir is a directory — present the .html file in it (e.g. dir/index.html).',
      'ErrInvalidInput',
    );
    await refusedWithText(
      f,
      worker,
      'webapp_present',
      { target: 'notes.txt' },
      'Error: notes.txt is not an .html file — a static app is an HTML page (its scripts, styles and images may sit next to it).',
      'ErrInvalidInput',
    );
  });

  it("presents an .html file: xylocopa's text, the card as a DM to the owner (no running run), the target relative to the project", async () => {
    const r = await answer(worker, 'webapp_present', {
      target: './index.html',
      title: 'Landing page',
      description: 'The first draft.',
    });
    const a = appOf(r.body);
    assert.match(a.app_id, /^[0-9a-f]{32}$/);
    assert.equal(a.target, 'index.html', 'the "./" prefix is stripped');
    assert.equal(
      r.text,
      [
        `Web app card posted to chat (message ${r.body.message_id}, kind=static).`,
        '- Registered: site / static / index.html',
        '- Posted in: a direct message to your owner',
        `- The user can tap the card to open it.\n- Served at: \`/apps/${a.app_id}/\` — a sandboxed page: its scripts run, but it makes no network requests; files next to it are served too.`,
      ].join('\n'),
    );
    const card = getMessage(f.app.engine.db, r.body.message_id as number)!;
    assert.equal(card.body, '🖥️ Web app: Landing page');
    assert.equal(card.fromName, 'worker');
    assert.deepEqual(card.metadata, {
      kind: 'webapp',
      webapp: {
        app_id: a.app_id,
        kind: 'static',
        target: 'index.html',
        project: 'site',
        title: 'Landing page',
        description: 'The first draft.',
        url: `/apps/${a.app_id}/`,
        presented_by: 'agent',
      },
    });
    assert.deepEqual(r.body.posted_in, { channel_id: card.channelId, channel: card.channelName, goal: false });
    const inbox = await answer(owner, 'read_inbox', {});
    assert.ok(JSON.stringify(inbox.body).includes('🖥️ Web app: Landing page'), 'the owner finds the card in its inbox');
  });

  it('keeps a leading dot (the lstrip("./") quirk fixed) and accepts an absolute path inside the project and .htm', async () => {
    assert.equal(
      appOf((await answer(worker, 'webapp_present', { target: '.hidden/x.html' })).body).target,
      '.hidden/x.html',
    );
    assert.equal(
      appOf((await answer(worker, 'webapp_present', { target: join(dir, 'sub', 'page.htm'), agent_id: 'worker' })).body)
        .target,
      'sub/page.htm',
      'an agent may name itself',
    );
  });

  it('re-presenting the same target updates the registration: same id, non-empty fields replaced, a new card', async () => {
    clock.advance(60_000);
    const first = appOf((await answer(worker, 'webapp_present', { target: 'index.html' })).body);
    const again = await answer(owner, 'webapp_present', {
      target: join(dir, 'index.html'),
      description: 'Second draft.',
      agent_id: 'worker',
    });
    const a = appOf(again.body);
    assert.equal(again.body.outcome, 'represented');
    assert.equal(a.app_id, first.app_id);
    assert.deepEqual([a.title, a.description], ['Landing page', 'Second draft.'], 'an empty title keeps the old one');
    assert.equal(a.last_presented_at, '2026-03-05T15:08:00.000Z');
    assert.notEqual(a.message_id, first.message_id);
    assert.equal(getMessage(f.app.engine.db, a.message_id)!.body, '🖥️ Web app: Landing page');
  });
});

describe('webapp_present: ports and links', () => {
  it("refuses ports outside 1024-65535, a non-number with kind=port, and Colony's own port", async () => {
    await refusedWithText(
      f,
      worker,
      'webapp_present',
      { target: '80' },
      'Error: port must be in 1024-65535.',
      'ErrInvalidInput',
    );
    await refusedWithText(
      f,
      worker,
      'webapp_present',
      { target: '65536' },
      'Error: port must be in 1024-65535.',
      'ErrInvalidInput',
    );
    await refusedWithText(
      f,
      worker,
      'webapp_present',
      { target: 'vite', kind: 'PORT' },
      'Error: port must be a number in 1024-65535 (got "vite").',
      'ErrInvalidInput',
    );
    await refusedWithText(
      f,
      worker,
      'webapp_present',
      { target: '7070' },
      "Error: cannot proxy the orchestrator's own port.",
      'ErrInvalidInput',
    );
    process.env.COLONY_PORT = '8123';
    try {
      await refusedWithText(
        f,
        worker,
        'webapp_present',
        { target: '8123' },
        "Error: cannot proxy the orchestrator's own port.",
        'ErrInvalidInput',
      );
    } finally {
      delete process.env.COLONY_PORT;
    }
  });

  it('presents a port with the proxy prefix; "05173" is the same registration as "5173"', async () => {
    const r = await answer(worker, 'webapp_present', { target: '5173', title: '' });
    const a = appOf(r.body);
    assert.equal(
      r.text,
      [
        `Web app card posted to chat (message ${r.body.message_id}, kind=port).`,
        '- Registered: site / port / 5173',
        '- Posted in: a direct message to your owner',
        `- The user can tap the card to open it.\n- Stable proxy prefix: \`/apps/${a.app_id}/\`` +
          "\n- Prefix is stripped when proxying — root-served apps (TensorBoard, http.server) work as-is; vite dev needs base:'./'." +
          '\n- Proxying ends when the presenting agent is stopped.',
      ].join('\n'),
    );
    assert.equal(getMessage(f.app.engine.db, a.message_id)!.body, '🖥️ Web app: localhost:5173');
    const same = await answer(worker, 'webapp_present', { target: '05173', kind: 'port' });
    assert.equal(appOf(same.body).app_id, a.app_id);
  });

  it('presents an http(s) link as itself; other schemes are refused', async () => {
    const r = await answer(worker, 'webapp_present', { target: 'https://example.com/report', title: 'Report' });
    const a = appOf(r.body);
    assert.equal(a.url, 'https://example.com/report');
    assert.equal(
      r.text,
      [
        `Web app card posted to chat (message ${r.body.message_id}, kind=url).`,
        '- Registered: site / url / https://example.com/report',
        '- Posted in: a direct message to your owner',
        '- The user can tap the card to open it.',
      ].join('\n'),
    );
    await refusedWithText(
      f,
      worker,
      'webapp_present',
      { target: 'javascript:alert(1)', kind: 'url' },
      'Error: url must be an http:// or https:// URL.',
      'ErrInvalidInput',
    );
    await refusedWithText(
      f,
      worker,
      'webapp_present',
      { target: 'ftp://example.com/x', kind: 'url' },
      'Error: url must be an http:// or https:// URL.',
      'ErrInvalidInput',
    );
  });
});

describe('webapp_list', () => {
  it('"" lists the calling agent\'s project, most recently presented first, with xylocopa\'s rows', async () => {
    clock.advance(60_000);
    await answer(worker, 'webapp_present', { target: 'https://example.com/report' });
    const r = await answer(worker, 'webapp_list', {});
    assert.equal(r.body.project, 'site');
    const apps = r.body.apps as App[];
    // 5173 and index.html were both last presented at 15:08: the later registration first.
    assert.deepEqual(
      apps.map((a) => a.target),
      ['https://example.com/report', '5173', 'index.html', 'sub/page.htm', '.hidden/x.html'],
    );
    const [port, landing] = [apps[1]!, apps[2]!];
    assert.equal(
      r.text,
      [
        `Found 5 web app(s) in \`site\`:\n`,
        '- **Report** — kind=url, target=`https://example.com/report`',
        '  url: `https://example.com/report`',
        '  last presented: 2026-03-05 15:09',
        '- **5173** — kind=port, target=`5173`',
        `  url: \`${port.url}\``,
        '  last presented: 2026-03-05 15:08',
        '- **Landing page** — kind=static, target=`index.html`',
        '  Second draft.',
        `  url: \`${landing.url}\``,
        '  last presented: 2026-03-05 15:08',
        '- **sub/page.htm** — kind=static, target=`sub/page.htm`',
        `  url: \`${apps[3]!.url}\``,
        '  last presented: 2026-03-05 15:07',
        '- **.hidden/x.html** — kind=static, target=`.hidden/x.html`',
        `  url: \`${apps[4]!.url}\``,
        '  last presented: 2026-03-05 15:07',
      ].join('\n'),
    );
  });

  it('an owner (no project of its own) sees every project, with project=; a named project; an unknown one is empty', async () => {
    const all = await answer(owner, 'webapp_list', {});
    assert.equal(all.body.project, null);
    assert.ok(
      all.text.startsWith(
        `Found ${all.body.count} web app(s):\n\n- **Report** — kind=url, target=\`https://example.com/report\`, project=site\n`,
      ),
      all.text,
    );
    assert.equal((await answer(owner, 'webapp_list', { project: 'site' })).body.count, all.body.count);
    assert.equal(
      (await answer(owner, 'webapp_list', { project: 'nope' })).text,
      'No web apps registered for project `nope`. Present one with webapp_present.',
    );
    assert.equal(
      (await answer(owner, 'webapp_list', { project: 'old' })).text,
      'No web apps registered for project `old`. Present one with webapp_present.',
    );
  });

  it('another tenant sees none of them', async () => {
    const stranger = await f.connect(f.addOwner('outsider').token);
    assert.equal(
      (await answer(stranger, 'webapp_list', {})).text,
      'No web apps registered for any project. Present one with webapp_present.',
    );
    assert.equal((await answer(stranger, 'webapp_list', { project: 'site' })).body.count, 0);
  });
});
