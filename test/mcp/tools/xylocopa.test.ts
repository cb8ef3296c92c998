import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { callTool, mcpFixture, textOf, type McpFixture } from '../../helpers/mcp.js';

/**
 * xylocopa's acceptance script, the project and health rows — checks 1 to 13 in its
 * order, on one store, through a real MCP Client as an agent (the script's caller) — with the exact
 * texts behind its substring checks. Tasks, sessions and agents (checks 14–35) are other test files'.
 */
delete process.env.COLONY_ALLOWED_ROOTS; // the workspace (and registered projects) are the only allowed roots here

let f: McpFixture;
let agent: Client;
let tmp: string;
before(async () => {
  f = await mcpFixture();
  agent = await f.connect(f.agentToken);
  tmp = join(f.dataDir, 'workspace', 'projects', 'tmp'); // an agent's projects lie under the projects root (or its own workspace)
});
after(() => f.close());

async function call(name: string, args: Record<string, unknown> = {}) {
  const { result, body } = await callTool(agent, name, args);
  assert.ok(!result.isError, `${name}: ${textOf(result)}`);
  return { text: textOf(result), body };
}

describe('xylocopa test_mcp_tools.py, checks 1–13', () => {
  it('1: the registry has the project tools and system_health (and the session and agent tools beside them)', async () => {
    const names = new Set((await agent.listTools()).tools.map((t) => t.name));
    for (const name of [
      'project_list',
      'project_get',
      'project_create',
      'project_scaffold',
      'project_regenerate_claude_md',
      'system_health',
      'session_list',
      'session_read',
      'session_tail',
      'list_sessions',
      'read_session',
      'agent_list',
      'agent_get',
    ]) {
      assert.ok(names.has(name), name);
    }
  });

  it('2: system_health on an empty store says db: OK and projects: 0', async () => {
    const { text } = await call('system_health');
    assert.ok(text.includes('db: OK'), text);
    assert.ok(text.includes('projects: 0'), text);
  });

  it('3: project_list on the empty store', async () => {
    assert.equal((await call('project_list')).text, 'No projects found.');
  });

  it('4: project_get of a missing project', async () => {
    assert.equal(
      (await call('project_get', { name: 'does-not-exist' })).text,
      'Project `does-not-exist` not found.\nAvailable: (none)',
    );
  });

  it('5: project_create makes the directory and scaffolds CLAUDE.md', async () => {
    const path = join(tmp, 'test-project');
    const { text } = await call('project_create', { name: 'test-mcp-proj', path, description: 'MCP test project' });
    assert.equal(
      text,
      `Created project \`test-mcp-proj\`.\nPath: ${path}\nGit: (local)\nScaffolded CLAUDE.md and PROGRESS.md if missing.`,
    );
    assert.ok(existsSync(path));
    assert.ok(existsSync(join(path, 'CLAUDE.md')));
    assert.ok(existsSync(join(path, 'PROGRESS.md')));
  });

  it('6: the same call again: already exists', async () => {
    const path = join(tmp, 'test-project');
    const { text } = await call('project_create', { name: 'test-mcp-proj', path, description: 'MCP test project' });
    assert.equal(text, `Project \`test-mcp-proj\` already exists (active).\nPath: ${path}\nNo changes made.`);
  });

  it('7: an invalid name', async () => {
    const { text } = await call('project_create', { name: 'bad name with spaces' });
    assert.equal(
      text,
      'Invalid project name `bad name with spaces`. Must start with alphanumeric and contain only [a-zA-Z0-9._-].',
    );
  });

  it('8: project_list shows it', async () => {
    const path = join(tmp, 'test-project');
    assert.equal(
      (await call('project_list')).text,
      `Found 1 project(s):\n\n- **test-mcp-proj** — \`${path}\`\n  model: (default)  git: (local)\n  MCP test project`,
    );
  });

  it('9: project_get shows the path, agents: 0 and tasks', async () => {
    const path = join(tmp, 'test-project');
    const { text } = await call('project_get', { name: 'test-mcp-proj' });
    assert.equal(
      text,
      [
        '# Project: test-mcp-proj',
        '- display_name: test-mcp-proj',
        `- path: \`${path}\``,
        '- git_remote: (local)',
        '- default_model: (default)',
        '- description: MCP test project',
        '',
        '## Stats',
        '- agents: 0 total, 0 active',
        '- sessions: 0',
        '- tasks: (none)',
      ].join('\n'),
    );
    assert.ok(text.includes(path) && text.includes('agents: 0') && text.includes('tasks: '));
  });

  it('10: project_scaffold when both files are there: no changes', async () => {
    assert.equal(
      (await call('project_scaffold', { name: 'test-mcp-proj' })).text,
      'Project `test-mcp-proj`: no changes (files already present).',
    );
  });

  it('11: project_scaffold of a missing project', async () => {
    assert.equal(
      (await call('project_scaffold', { name: 'does-not-exist' })).text,
      'Project `does-not-exist` not found.\nAvailable: test-mcp-proj',
    );
  });

  it('12: project_regenerate_claude_md: Regenerated', async () => {
    const file = join(tmp, 'test-project', 'CLAUDE.md');
    const before = readFileSync(file, 'utf8');
    const { text, body } = await call('project_regenerate_claude_md', { name: 'test-mcp-proj' });
    assert.ok(text.includes('Regenerated'), text);
    assert.equal(
      text,
      'Regenerated CLAUDE.md for `test-mcp-proj` (project-specific rules preserved): no changes (already up to date).',
    );
    assert.equal(body.changed, false, 'the file project_create wrote is already the rendering');
    assert.equal(readFileSync(file, 'utf8'), before);
  });

  it('13: project_regenerate_claude_md of a missing project', async () => {
    const { text, body } = await call('project_regenerate_claude_md', { name: 'does-not-exist' });
    assert.equal(text, 'Project `does-not-exist` not found.\nAvailable: test-mcp-proj');
    assert.deepEqual(body, { status: 'error', error_code: 'ErrProjectNotFound', message: text });
  });
});
