import type { BillingLane } from '../../events/runs.js';
import type { Runtime } from '../../events/principals.js';
import type { JsonObject } from './jsonl.js';

/**
 * What a runtime adapter is: the one place that knows an agent CLI — how to launch it for one run, how
 * to read what it printed (its outcome, its usage and cost, its answer and its tool calls), and what it
 * needs on the host (its binary, its credentials, its provider's host). The runner (runner.ts) knows
 * none of this; it asks the adapter of the agent's runtime.
 */

/** One argument of a launch line: a literal (quoted for the shell), or a variable of the run's environment. */
export type Arg = string | { env: string };

/** What the adapter is told about one run. Everything here may hold an agent's text except `binary`. */
export interface LaunchContext {
  /** The CLI's executable as the sandbox sees it (a real path, mounted read-only). */
  binary: string;
  /** Null: the CLI's own default model (the agent's model is not one this CLI takes, e.g. Colony's default coordinator's). */
  model: string | null;
  /** The agent's Colony tools (its tool scope): exactly these are allowed, by their CLI names. */
  toolScope: readonly string[];
  /** The wake prompt (runs/prompt.ts). */
  prompt: string;
  /** What the run may still spend, in US dollars, when its goal has a budget; null: no cap. */
  budgetUsd: number | null;
  /** The CLI session to resume (its own id, from the agent's last run on this task or goal); null: fresh. */
  resume: string | null;
  /** Colony's MCP URL as the process sees it, and the agent's token (also in the environment as COLONY_TOKEN). */
  mcpUrl: string;
  token: string;
  /** The provider endpoints the owner set as secrets (ANTHROPIC_BASE_URL, OPENAI_BASE_URL…: a proxy, a gateway), by name. */
  baseUrls: Readonly<Record<string, string>>;
}

/** A file the runner writes into the agent's home for the run's life (mode 0600, removed when it ends). */
export interface RunFile {
  /** The environment variable that names it for the launch line (e.g. COLONY_MCP_CONFIG). */
  env: string;
  content: string;
}

export interface LaunchPlan {
  args: Arg[];
  stdin: string;
  /** Set in the run's environment (after Colony's own: an adapter cannot change COLONY_*). */
  env: Record<string, string>;
  files: RunFile[];
  /** Directories the CLI needs in its home before it starts (relative to it), e.g. Codex's CODEX_HOME. */
  homeDirs?: string[];
}

export type FailureCause =
  'permission_denied' | 'auth' | 'error_result' | 'no_colony_call' | 'crash' | 'resume_failed' | 'mcp_unreachable';

export interface RunReport {
  /** The agent's final answer (the session's agent message); null when it gave none. */
  answer: string | null;
  /** Its tool calls, one line each (`colony.get_goal {"goal_id":3} → ok`), in order. */
  steps: string[];
  tokensIn: number;
  tokensOut: number;
  /** Cached input tokens (part of tokensIn), for pricing from a rate card. */
  cachedIn: number;
  /** Dollars as the CLI reported them; null when it reported none (then a rate card prices it, or it stays unknown). */
  costUsd: number | null;
  lane: BillingLane;
  /** The CLI's own session id, to resume. */
  cliSession: string | null;
  /** The usage is the CLI session's so far, not this process's (Codex on resume): the runner takes the session's earlier runs off. */
  cumulative?: boolean;
  /** How many calls reached Colony's tools. */
  colonyCalls: number;
  /** Why the run failed although the process may have exited 0; null: it did what a run does. */
  failure: { cause: FailureCause; reason: string } | null;
}

/** A run's usage so far, read from its output while it runs (streamed spend, the budget's stop). */
export interface UsageSoFar {
  tokensIn: number;
  tokensOut: number;
  cachedIn: number;
  /** Dollars as the CLI reported them so far; null: it said none yet (a rate card may price the tokens). */
  costUsd: number | null;
  /** The figures are the CLI session's so far (a resumed Codex thread), not this process's; with the session. */
  cumulative?: { cliSession: string | null };
}

/** Reads the CLI's output one JSON line at a time, as it comes. */
export interface UsageMeter {
  line(l: JsonObject): void;
  usage(): UsageSoFar;
}

/** What `colony doctor` and the configuration checks need of a runtime. */
export interface RuntimeNeeds {
  /** The executable's name on PATH, and the environment variable that can name it instead. */
  binary: string;
  binaryEnv: string;
  /** The secrets (by name, in the agent's scope) that are its API key, any of them. */
  keySecrets: readonly string[];
  /** Files in the agent's private HOME that hold a CLI login, relative to it. */
  loginFiles: readonly string[];
  /** The provider hosts it talks to (for the network allow-list), given the model. */
  hosts(model: string): string[];
  /** The install line the owner runs when the binary is missing. */
  install: string;
}

export interface RuntimeAdapter {
  runtime: Exclude<Runtime, 'command'>;
  /** Its name in messages: "Claude Code". */
  label: string;
  needs: RuntimeNeeds;
  /**
   * Variables that name a config directory the CLI must find as Colony made it and cannot write (OpenCode's
   * XDG_CONFIG_HOME): the agent's home is its own to write, so a config there would outlive the run and
   * widen its next one. Colony points each at a read-only directory of its data dir holding exactly these
   * files (by path relative to it; their directories are made).
   */
  fixedConfig?: { env: string; files: Record<string, string> }[];
  /** Null when the CLI takes this model string; else why not, naming the form it takes. */
  checkModel(model: string): string | null;
  launch(ctx: LaunchContext): LaunchPlan;
  /** A meter of the run's usage while it runs (`resumed`: this run resumes a CLI session). */
  meter(ctx: { resumed: boolean }): UsageMeter;
  /** Reads the process's stdout (and exit) into the run's report. */
  report(out: { stdout: string; exitCode: number | null; tail: string }, ctx: ReportContext): RunReport;
}

export interface ReportContext {
  /** Whether the wake asked for Colony calls (a goal or a task to act on): a run that made none failed. */
  expectsColonyCall: boolean;
  /** The lane the credentials given to the run imply (an API key secret: api), when the CLI does not say. */
  lane: BillingLane;
  /** Whether this run tried to resume a CLI session. */
  resumed: boolean;
}

/** A model string any CLI could take: no option-like start, no spaces or shell characters. */
export const MODEL_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:/@[\]-]{0,127}$/;
