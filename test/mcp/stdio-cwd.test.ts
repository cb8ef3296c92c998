import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { colony, stdioClient } from '../helpers/cli.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * xylocopa's task_create without a project, over stdio: the project is the one whose path
 * holds the working directory the client started `colony stdio` in — a subdirectory counts, the longest
 * project path wins; elsewhere the answer says it could not infer one.
 */
it('task_create over stdio infers the project from the working directory colony stdio was started in', async (t) => {
  const scratch = tempDir('colony-stdio-cwd-');
  t.after(() => scratch.cleanup());
  const dir = scratch.dir;
  const token = JSON.parse(colony(['init', '--data', dir, '--json']).stdout).token as string;
  const connect = async (cwd: string) => {
    const client = await stdioClient(dir, token, cwd);
    t.after(() => client.close());
    return client;
  };
  const say = async (client: Client, name: string, args: Record<string, unknown>) =>
    ((await client.callTool({ name, arguments: args })).content as { text: string }[])[0]!.text;
  const site = join(dir, 'workspace', 'site');
  const nested = join(site, 'docs');
  mkdirSync(join(nested, 'deep'), { recursive: true });
  const outside = join(dir, 'workspace', 'elsewhere');
  mkdirSync(outside, { recursive: true });
  const first = await connect(dir);
  assert.match(await say(first, 'project_create', { name: 'site', path: site }), /Created project/);
  assert.match(await say(first, 'project_create', { name: 'site-docs', path: nested }), /Created project/);
  const inDeep = await connect(join(nested, 'deep'));
  assert.match(
    await say(inDeep, 'task_create', { title: 'Fix the docs' }),
    /^Created task `\d+` in project `site-docs \(inferred from cwd\)` \[INBOX\]\./,
  );
  const inSite = await connect(site);
  assert.match(await say(inSite, 'task_create', { title: 'Fix the site' }), /in project `site \(inferred from cwd\)`/);
  const lost = await connect(outside);
  assert.equal(
    await say(lost, 'task_create', { title: 'Nowhere' }),
    `Could not infer project from cwd (${outside}).\nPass \`project\` explicitly. Available: site, site-docs`,
  );
});
