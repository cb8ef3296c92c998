import { readFileSync } from 'node:fs';
import type { AgentChanges } from '../actions/agents.js';
import { TIERS, type Tier } from '../events/principals.js';
import { CliError } from './shared.js';
import { parseRuntime } from './runtime-check.js';

/**
 * The options of `colony agents create|update`, checked before the data dir is opened, so a bad option
 * writes nothing.
 */

/**
 * The tools that exist, checked against a --tools list before the data dir is opened (so a typo writes
 * nothing) and handed to the action, whose decider checks again. Loaded only here: the registry imports
 * every MCP tool module, which `colony --help` must not pay for.
 */
export async function checkedTools(toolScope: readonly string[]) {
  const [{ buildToolRegistry }, { checkToolScope }] = await Promise.all([
    import('../mcp/tools/index.js'),
    import('../commands/tool-scope.js'),
  ]);
  const known = buildToolRegistry().known();
  checkToolScope(toolScope, known, '--tools');
  return known;
}

export interface CreateOptions {
  model: string;
  promptFile: string;
  tools: string;
  tier: string;
  command?: string;
  runtime?: string;
  json?: boolean;
}

export function parseCreate(opts: CreateOptions) {
  checkTier(opts.tier);
  const toolScope = list(opts.tools)!.sort();
  if (toolScope.length === 0) throw new CliError('--tools must name at least one tool');
  if (!opts.model.trim()) throw new CliError('--model must not be empty');
  const systemPrompt = readPrompt(opts.promptFile);
  return {
    model: opts.model.trim(),
    systemPrompt,
    toolScope,
    tier: opts.tier as Tier,
    command: opts.command ?? null,
    runtime: parseRuntime(opts.runtime) ?? null,
  };
}

export interface UpdateOptions {
  model?: string;
  promptFile?: string;
  tools?: string;
  skills?: string;
  subagents?: string;
  tier?: string;
  command?: string;
  runtime?: string;
  json?: boolean;
}

export function parseUpdate(opts: UpdateOptions): AgentChanges {
  if (opts.tier !== undefined) checkTier(opts.tier);
  const toolScope = list(opts.tools);
  if (toolScope !== undefined && toolScope.length === 0) throw new CliError('--tools must name at least one tool');
  if (opts.model !== undefined && !opts.model.trim()) throw new CliError('--model must not be empty');
  const changes: AgentChanges = {
    model: opts.model?.trim(),
    systemPrompt: opts.promptFile === undefined ? undefined : readPrompt(opts.promptFile),
    toolScope,
    skills: list(opts.skills),
    subagents: list(opts.subagents),
    tier: opts.tier as Tier | undefined,
    command: opts.command,
    runtime: parseRuntime(opts.runtime),
  };
  if (Object.values(changes).every((v) => v === undefined))
    throw new CliError(
      'nothing to change: give at least one of --model, --prompt-file, --tools, --skills, --subagents, --tier, --command, --runtime',
    );
  return changes;
}

function checkTier(tier: string): void {
  if (!TIERS.includes(tier as Tier)) throw new CliError(`--tier must be one of ${TIERS.join(', ')}, not "${tier}"`);
}

/** A comma-separated list, trimmed, without blanks or repeats. */
const list = (v: string | undefined): string[] | undefined =>
  v === undefined
    ? undefined
    : [
        ...new Set(
          v
            .split(',')
            .map((t) => t.trim())
            .filter(Boolean),
        ),
      ];

/** The system prompt of --prompt-file: a file that cannot be read, or holds only blanks, is refused. */
function readPrompt(file: string): string {
  let systemPrompt: string;
  try {
    systemPrompt = readFileSync(file, 'utf8');
  } catch (e) {
    throw new CliError(
      `cannot read --prompt-file ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  if (!systemPrompt.trim()) throw new CliError(`--prompt-file ${file} is empty`);
  return systemPrompt;
}
