import type * as z from 'zod';
import type { App } from '../app.js';
import type { CommandOptions } from '../engine/handle.js';
import type { KnownTools } from '../commands/tool-scope.js';
import type { RunStarter } from '../runtime/reactor.js';
import type { TaskRef } from './tasks/ids.js';
import type { NodeProblem } from './views/integrity.js';
import { type Caller } from '../events/principals.js';

/**
 * A tool is explicit metadata plus a handler: its trust class — never guessed from its name — sets the
 * MCP annotations and the catalog's `trust`; its surface says who sees it (`agent`: owners and the
 * agents whose tool scope names it; `owner`: owners only).
 */
export type Trust = 'read' | 'write' | 'elevated' | 'destructive';
export type Surface = 'agent' | 'owner';

export interface ToolContext {
  readonly app: App;
  readonly caller: Caller;
  readonly tools: ToolLookup;
  /** The options a command run by this call carries: the caller as actor, the call's command id. */
  readonly command: CommandOptions;
  /** The reactor, when this process runs agents (colony serve); null otherwise. */
  readonly runtime: { readonly reactor: RunStarter | null };
  /** This node's problem now (a PostgreSQL node that cannot follow its store: mcp/context.ts NodeProblem). */
  readonly node: { readonly problem: () => NodeProblem | null };
  /** The stdio client's working directory (task_create infers the project from it); null over HTTP. */
  readonly cwd: string | null;
  /** Tells the client how a call that takes seconds is going (MCP progress notifications); a no-op unless it asked. */
  readonly progress: Progress;
}

/** What a handler may ask of the registry it was called through (registry.ts implements it). */
export interface ToolLookup {
  get(name: string): AnyTool | undefined;
  known(): KnownTools;
  list(): AnyTool[];
}

/** One step of a long call, as a line a person can read ("run 12 started"). */
export type Progress = (message: string) => void;
export const noProgress: Progress = () => undefined;

/** What a tool's `task` form answers: the record its task follows, or the answer itself. */
export type TaskStart<O> = { task: TaskRef } | { now: O };

export interface ToolDefinition<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  /** Written for an LLM: what it does, when to use it, what its errors mean. */
  description: string;
  trust: Trust;
  surface: Surface;
  /** A strict object schema: unknown keys are an error. */
  input: I;
  /** Present when the tool returns data: the shape of `structuredContent`. */
  output?: O;
  /** The module (src folder) it belongs to, for the capability catalog. */
  module: string;
  /** Arguments that are paths although their names do not say so (the path policy guards them too). */
  pathFields?: readonly string[];
  /** Path arguments where "" means "not given" (xylocopa's `path=""`): dropped before the path policy, so the schema default applies; the handler's default must lie inside the roots. */
  blankPathDefaults?: readonly string[];
  /**
   * The tool's `_meta` in tools/list, for protocol extensions keyed there — MCP Apps' `ui.resourceUri`
   * names the UI a host renders the tool's result in (review_proposal's approval card).
   */
  meta?: Readonly<Record<string, unknown>>;
  handler(ctx: ToolContext, args: z.infer<I>): z.infer<O> | Promise<z.infer<O>>;
  /**
   * A long call's other form, used instead of `handler` when the request accepts an MCP task (the
   * 2026-07-28 tasks extension, src/mcp/tasks): start the work and name the Colony record the task
   * follows in the log — or, when there is nothing to wait for, answer at once as `handler` would.
   */
  task?(ctx: ToolContext, args: z.infer<I>): TaskStart<z.infer<O>> | Promise<TaskStart<z.infer<O>>>;
  /** The text shown to the model; defaults to the JSON of the result. */
  text?(result: z.infer<O>): string;
}

// Tools of every domain sit side by side in the registry; each one's handler is typed by its own schemas.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyTool = ToolDefinition<any, any>;

export const defineTool = <I extends z.ZodObject, O extends z.ZodObject>(
  tool: ToolDefinition<I, O>,
): ToolDefinition<I, O> => tool;

export interface Annotations {
  title: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

export function annotationsFor(tool: AnyTool): Annotations {
  const base = { title: tool.title, openWorldHint: tool.trust === 'elevated' };
  switch (tool.trust) {
    case 'read':
      return { ...base, readOnlyHint: true, destructiveHint: false, idempotentHint: true };
    case 'write':
    case 'elevated':
      return { ...base, readOnlyHint: false, destructiveHint: false, idempotentHint: false };
    case 'destructive':
      return { ...base, readOnlyHint: false, destructiveHint: true, idempotentHint: false };
    default: {
      const never: never = tool.trust;
      return never;
    }
  }
}

/**
 * Verbs no agent-surface tool name may contain (xylocopa's deny list): such operations belong to
 * owners. A test checks every registered agent tool against it.
 */
export const FORBIDDEN_AGENT_VERBS = [
  'delete',
  'archive',
  'kill',
  'force',
  'reset',
  'drop',
  'wipe',
  'clean',
  'cancel',
  'stop',
  'purge',
  'restore',
  'truncate',
  'restart',
] as const;
