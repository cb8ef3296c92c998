import type { Colony } from './colony-client.js';

/**
 * What the doc-gardener's agents agree on: their names, the task names of the tree, the artifact kinds
 * they post, and the diff report's file and header (the command verifier checks for them).
 */
export const GOAL_TITLE = "Keep Colony's CLI documentation accurate";
export const COORDINATOR = 'doc-coordinator';
export const SCANNER = 'docs-scanner';
export const VERIFIER = 'cli-verifier';

/** The page that documents Colony's CLI (relative to the repository) and the section whose table lists the commands. */
export const CLI_DOC = 'docs/cli.md';
export const CLI_SECTION = '## Commands';

export const TASK = { scan: 'scan-docs', extract: 'extract-source-flags', diff: 'diff-and-report' } as const;
export type TaskName = (typeof TASK)[keyof typeof TASK];

/** `metadata.artifact` of the messages each task posts to the goal channel (all with `kind: "artifact"`). */
export const ARTIFACT = { documented: 'documented-flags', real: 'real-flags', diff: 'cli-doc-diff' } as const;

/** Written by the cli-verifier in its working directory (<data>/workspace/agents/cli-verifier). */
export const REPORT_FILE = 'cli-doc-diff.md';
export const REPORT_HEADER = '# CLI documentation diff';

/**
 * The command verifier of diff-and-report: the owner registers it as a verifier recipe (the demo's host
 * does, like `colony verifiers add`), and the coordinator's tree names the recipe — agents never write a
 * command that runs. With no directory of its own it runs where the checked work lies: the assignee's
 * (${VERIFIER}'s) working directory, read-only.
 */
export const REPORT_RECIPE = 'doc-report-written';
export const REPORT_CHECK = `f=${REPORT_FILE}; test -s "$f" && head -n 1 "$f" | grep -qxF '${REPORT_HEADER}'`;

/** Global options of every `colony` command and the help flags: never documented per command, never compared. */
export const IGNORED_FLAGS = new Set(['-h', '--help', '-V', '--version', '--data', '--durability']);

/** A task assignment as the coordinator sends it in a DM's metadata. `after`: claim only once that task is done. */
export interface Assignment {
  task_id: number;
  name: TaskName;
  after?: number;
}
export interface AssignmentMetadata {
  kind: 'assignment';
  goal_id: number;
  tasks: Assignment[];
}

/** The JSON block an artifact message carries after its human-readable summary. */
export function withJson(summary: string, data: unknown): string {
  return `${summary}\n\n\`\`\`json\n${JSON.stringify(data)}\n\`\`\`\n`;
}

export function jsonOf<T>(body: string): T {
  const m = /```json\n([\s\S]*?)\n```/.exec(body);
  if (!m) throw new Error('the artifact message has no JSON block');
  return JSON.parse(m[1]!) as T;
}

/** What each role of the agent runs with: its Colony client, its environment, its prompt and the repository it reads. */
export interface RunContext {
  colony: Colony;
  env: NodeJS.ProcessEnv;
  prompt: string;
  repo: string;
}
