import { closeSync } from 'node:fs';
import { existsNoFollow, makeDir, openDir, readText, remove, writeText, type Owner } from '../../beneath.js';
import { dirname, join } from 'node:path';

/**
 * A project's CLAUDE.md and PROGRESS.md (xylocopa's scaffolder), rendered from the
 * project's record only — no directory scan, no clock — so the same project always gives the same bytes.
 *
 * Markers:
 * - A file is *scaffolded* when one of its first 5 lines contains SCAFFOLD_HEADER (xylocopa's header).
 *   Scaffolding leaves scaffolded files alone; a file without the header is someone's own text, which
 *   is kept verbatim: CLAUDE.md's becomes the project-rules block, PROGRESS.md's follows the template.
 * - The *project-rules block* of CLAUDE.md is everything after the first line that is exactly
 *   `## Project-Specific Rules` (RULES_HEADING), to the end of the file. project_regenerate_claude_md
 *   rewrites everything above it and keeps the block byte for byte.
 *
 * Every change goes through a FileJournal, so a failing step can undo the steps before it.
 */
export const SCAFFOLD_HEADER = '> Read this file at the start of every task';
export const RULES_HEADING = '## Project-Specific Rules';
export const CLAUDE_MD = 'CLAUDE.md';
export const PROGRESS_MD = 'PROGRESS.md';
const DEFAULT_RULES =
  "<!-- This project's own rules go here. project_regenerate_claude_md keeps everything below the heading above, byte for byte. -->\n";

export interface ProjectRecord {
  name: string;
  path: string;
  gitRemote: string | null;
  description: string | null;
}

/** One line: a newline in a description could otherwise forge the rules heading. */
const oneLine = (text: string): string => text.replace(/\s*[\r\n]+\s*/g, ' ');

export function renderClaudeMd(p: ProjectRecord, rules: string): string {
  return (
    [
      '# CLAUDE.md',
      `${SCAFFOLD_HEADER}. Colony renders it from the project's record: everything below "${RULES_HEADING}" is yours and`,
      '> survives project_regenerate_claude_md byte for byte; the rest is rewritten.',
      '',
      `## Project: ${p.name}`,
      `- Path: \`${oneLine(p.path)}\``,
      `- Git: ${oneLine(p.gitRemote ?? '(local)')}`,
      `- Description: ${oneLine(p.description ?? '(none)')}`,
      '',
      '## Working Rules',
      '- Investigate before changing code: read the relevant code and trace the flow first; never guess.',
      '- Keep changes small and focused; do not rename or refactor unless the task asks for it.',
      '- Do not delete or weaken tests, and do not change dependencies without approval.',
      `- When a task ends, append what worked, what failed and why to ${PROGRESS_MD}.`,
      '',
      '## Colony Context',
      '- This project is registered in Colony. Its agents reach Colony over MCP: `project_*`, `task_*`, `session_*`, `agent_*`, `probe_*`, `system_health`.',
      '- Agent tools list, get, read, create, update, dispatch and scaffold; destructive operations belong to the owner.',
      '- A message starting with `🔔 Probe` is an event you registered firing, not user input: check the condition before acting on it.',
      '',
      RULES_HEADING,
      '',
    ].join('\n') + rules
  );
}

export function renderProgressMd(p: ProjectRecord, existing: string | null): string {
  return (
    [
      '# PROGRESS.md',
      `${SCAFFOLD_HEADER}. Append only: never delete entries.`,
      '> Updated when tasks complete: what worked, what failed, and why.',
      '',
      `## ${p.name} — Lessons Learned`,
      '',
      '<!-- Entry format:',
      '### YYYY-MM-DD | Task: {title} | Status: success/abandoned',
      '- What: (one line summary)',
      '- Attempts: (what was tried)',
      '- Resolution: (what finally worked)',
      '- Lesson: (what future agents should know)',
      '-->',
      '',
    ].join('\n') + (existing === null ? '' : `\n${existing}`)
  );
}

const isScaffolded = (text: string): boolean => text.split('\n', 5).some((line) => line.includes(SCAFFOLD_HEADER));

/** The block after the rules heading, byte for byte; null when the file has no such heading. */
export function rulesBlock(text: string): string | null {
  const m = /^## Project-Specific Rules[^\S\n]*(?:\n|$)/m.exec(text);
  return m ? text.slice(m.index + m[0].length) : null;
}

export interface ScaffoldResult {
  claudeMd: boolean;
  progressMd: boolean;
}

/** Writes what is missing or not yet scaffolded (xylocopa's force=False); `force` re-renders CLAUDE.md (regenerate). */
export function scaffoldFiles(journal: FileJournal, p: ProjectRecord, force = false): ScaffoldResult {
  const claudePath = join(p.path, CLAUDE_MD);
  const progressPath = join(p.path, PROGRESS_MD);
  const claude = readText(claudePath);
  let claudeMd = false;
  if (claude === null || !isScaffolded(claude) || force) {
    const rules =
      claude === null ? DEFAULT_RULES : isScaffolded(claude) ? (rulesBlock(claude) ?? DEFAULT_RULES) : claude;
    const next = renderClaudeMd(p, rules);
    if (next !== claude) {
      journal.write(claudePath, next, claude);
      claudeMd = true;
    }
  }
  if (force) return { claudeMd, progressMd: false };
  const progress = readText(progressPath);
  let progressMd = false;
  if (progress === null || !isScaffolded(progress)) {
    journal.write(progressPath, renderProgressMd(p, progress), progress);
    progressMd = true;
  }
  return { claudeMd, progressMd };
}

/**
 * File changes that can be undone, newest first: directories it created (removed only while empty) and
 * files it wrote (restored to their old bytes, or removed). A project's directory is agent-writable, so
 * every read, write and removal reaches its file through directories opened without following a symlink
 * (beneath.ts): an agent swapping a directory for a symlink meanwhile gets a refusal, never a file of
 * Colony's (with the agent's text) written somewhere else.
 */
export class FileJournal {
  private readonly undo: (() => void)[] = [];

  /** `owner`: who what it creates belongs to — the sandbox's uid, so that confined agents can work there. */
  constructor(private readonly owner: Owner = null) {}

  /** Creates `dir` and its missing parents one by one, so each one created can be removed again. */
  mkdirp(dir: string): void {
    const missing: string[] = [];
    for (let d = dir; !existsNoFollow(d); d = dirname(d)) {
      missing.unshift(d);
      if (dirname(d) === d) break;
    }
    for (const d of missing) {
      if (makeDir(d, 0o755, this.owner)) this.undo.push(() => remove(d, true));
    }
    closeSync(openDir(dir)); // a directory, with no symlink on the way
  }

  write(file: string, content: string, previous: string | null): void {
    writeText(file, content, previous === null, 0o644, this.owner);
    this.undo.push(previous === null ? () => remove(file) : () => writeText(file, previous, false));
  }

  /** Undoes everything, newest first; a step that cannot be undone is skipped (never anything it did not do). */
  rollback(): void {
    for (const step of this.undo.splice(0).reverse()) {
      try {
        step();
      } catch {
        // e.g. someone else put a file in a directory we created: it stays, with their file.
      }
    }
  }
}
