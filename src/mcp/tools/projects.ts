import * as z from 'zod';
import {
  archiveProject,
  createProject,
  projectOf,
  regenerateClaudeMd,
  scaffoldProject,
} from '../../actions/projects.js';
import { projectStats } from '../../projections/overview-queries.js';
import { listProjects } from '../../projections/projects.js';
import { defineTool, type AnyTool, type ToolContext } from '../tool.js';
import { answer } from './xylocopa.js';
import {
  Archived,
  archivedText,
  Created,
  createdText,
  Got,
  gotText,
  Listed,
  listedText,
  Regenerated,
  regeneratedText,
  Scaffolded,
  scaffoldedText,
  statsView,
  view,
} from './project-text.js';
import { speaker } from '../../events/principals.js';

/**
 * xylocopa's project tools on Colony's projects, scoped to the caller's
 * tenant: project_list, project_get, project_create, project_scaffold, project_regenerate_claude_md — and
 * archive_project, which xylocopa left out on purpose (no forbidden verb on the agent surface): here it is
 * an owner tool behind a confirmation token. `path` goes through the path policy like every path argument.
 */
const common = { surface: 'agent', module: 'projects' } as const;
const tenantOf = (ctx: ToolContext): number => speaker(ctx.caller).tenant;
// Longer than the 100 allowed, so that xylocopa's "Project name too long" text answers, not a schema error.
const name = z
  .string()
  .max(1000)
  .describe('The project name: a letter or digit first, then letters, digits, ".", "_" or "-"; at most 100');

const list = defineTool({
  ...common,
  name: 'project_list',
  title: 'List projects',
  trust: 'read',
  description:
    'Lists your team\'s projects by name: name, path, git remote ("(local)" when none) and description; archived ones too (marked [ARCHIVED], after the active ones) when include_archived is true. Answers "No projects found." when there are none.',
  input: z.strictObject({ include_archived: z.boolean().default(false).describe('Also list archived projects') }),
  output: Listed,
  handler(ctx, a) {
    const projects = listProjects(ctx.app.engine.db, tenantOf(ctx), a.include_archived).map(view);
    return { status: 'ok' as const, count: projects.length, include_archived: a.include_archived, projects };
  },
  text: listedText,
});

const get = defineTool({
  ...common,
  name: 'project_get',
  title: 'Show a project',
  trust: 'read',
  description:
    'Shows one of your team\'s projects (archived ones too): path, git remote, description, and stats — its agents (total, and active = executing now), how many of them have a session, and its tasks by status (INBOX, PENDING, EXECUTING, REVIEW, COMPLETE, FAILED, TIMEOUT, CANCELLED). Answers "Project `NAME` not found." with the available names when there is none.',
  input: z.strictObject({ name }),
  output: Got,
  handler: (ctx, a) =>
    answer(() => {
      const p = projectOf(ctx.app, tenantOf(ctx), a.name);
      return {
        status: 'ok' as const,
        project: view(p),
        stats: statsView(projectStats(ctx.app.engine.db, p.projectId)),
      };
    }),
  text: gotText,
});

const create = defineTool({
  ...common,
  name: 'project_create',
  title: 'Create a project',
  trust: 'write',
  blankPathDefaults: ['path'],
  description:
    'Registers a project for your team: a directory (created if missing; default <data>/workspace/projects/NAME) that must lie inside the allowed roots (else ErrPathOutsideRoots, nothing written), with CLAUDE.md and PROGRESS.md scaffolded if missing. Once registered, its path is an allowed root for other path arguments. git_url is metadata only (nothing is cloned). Idempotent on the name: an active project answers "already exists" and changes nothing; an archived one is re-activated (its path kept, the path argument ignored; git_url and description fill only empty fields). If any step fails, nothing is kept: no event, no directory or file it made. Refusals are text: "Invalid project name …", "Project name too long …", "Could not create directory …".',
  input: z.strictObject({
    name,
    path: z
      .string()
      .max(4096)
      .default('')
      .describe('The project directory ("" for the default); inside the allowed roots'),
    git_url: z.string().max(500).default('').describe('Its git remote, stored as metadata'),
    description: z.string().max(10_000).default('').describe('What the project is'),
  }),
  output: Created,
  handler: (ctx, a) =>
    answer(() => {
      const c = createProject(
        ctx.app,
        speaker(ctx.caller),
        { name: a.name, path: a.path, gitUrl: a.git_url, description: a.description },
        ctx.command,
      );
      const scaffolded = c.scaffold && { claude_md: c.scaffold.claudeMd, progress_md: c.scaffold.progressMd };
      return { status: 'ok' as const, action: c.outcome, project: view(c.project), scaffolded };
    }),
  text: createdText,
});

const scaffold = defineTool({
  ...common,
  name: 'project_scaffold',
  title: 'Scaffold CLAUDE.md and PROGRESS.md',
  trust: 'write',
  description:
    'Writes CLAUDE.md and PROGRESS.md into an active project\'s directory where they are missing or not yet scaffolded (a file of your own is kept: CLAUDE.md\'s text becomes its project-specific rules, PROGRESS.md\'s follows the template). Safe to repeat: answers "Project `NAME`: no changes (files already present)." when both are there. Refusals are text: not found, archived, "path does not exist on disk", "Scaffold failed …" (nothing is left half-written).',
  input: z.strictObject({ name }),
  output: Scaffolded,
  handler: (ctx, a) =>
    answer(() => {
      const s = scaffoldProject(ctx.app, speaker(ctx.caller), a.name);
      return {
        status: 'ok' as const,
        project: s.project.name,
        claude_md: s.result.claudeMd,
        progress_md: s.result.progressMd,
      };
    }),
  text: scaffoldedText,
});

const regenerate = defineTool({
  ...common,
  name: 'project_regenerate_claude_md',
  title: 'Regenerate CLAUDE.md',
  trust: 'write',
  description:
    'Re-renders an active project\'s CLAUDE.md from its record (name, path, git remote, description), keeping everything below the "## Project-Specific Rules" heading byte for byte. Deterministic and safe to repeat: "Regenerated CLAUDE.md for `NAME` (project-specific rules preserved)." — with ": no changes (already up to date)." when the file already had exactly those bytes. Refusals are text: not found, archived, "path does not exist on disk", "Regenerate failed …".',
  input: z.strictObject({ name }),
  output: Regenerated,
  handler: (ctx, a) =>
    answer(() => {
      const r = regenerateClaudeMd(ctx.app, speaker(ctx.caller), a.name);
      return { status: 'ok' as const, project: r.project.name, changed: r.changed };
    }),
  text: regeneratedText,
});

const archive = defineTool({
  name: 'archive_project',
  title: 'Archive a project',
  trust: 'destructive',
  surface: 'owner',
  module: 'projects',
  description:
    'Owner only, destructive. Archives a project (a soft delete): it leaves project_list and working-directory inference, and its path stops being an allowed root; its files stay on disk and project_create with the same name re-activates it. The first call returns a confirm_token; call again with the same arguments plus confirmation_token within 60 s. Answers "Project `NAME` is already archived." when it is; not found is text too.',
  input: z.strictObject({ name }),
  output: Archived,
  handler: (ctx, a) =>
    answer(() => {
      const r = archiveProject(ctx.app, speaker(ctx.caller), a.name, ctx.command);
      return { status: 'ok' as const, project: view(r.project), archived: r.archived };
    }),
  text: archivedText,
});

export const projectTools: readonly AnyTool[] = [list, get, create, scaffold, regenerate, archive];
