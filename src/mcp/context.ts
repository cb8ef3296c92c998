import type { App } from '../app.js';
import { VERSION } from '../version.js';
import { AuditLog } from './audit.js';
import { Authenticator } from './auth.js';
import { Confirmations } from './confirm.js';
import { pathPolicyFor, type PathPolicy } from '../actions/projects/paths.js';
import type { ToolRegistry } from './registry.js';
import type { RunStarter } from '../runtime/reactor.js';
import { writesStopped, type NodeProblem } from './views/integrity.js';

/** What every MCP session of one Colony process shares. */
export interface McpContext {
  readonly app: App;
  readonly tools: ToolRegistry;
  readonly audit: AuditLog;
  readonly confirmations: Confirmations;
  readonly paths: PathPolicy;
  readonly version: string;
  readonly auth: Authenticator;
  /** The reactor that runs agents (execute_agent), set once the process serves HTTP; null under stdio. */
  readonly runtime: { reactor: RunStarter | null };
  /**
   * This node's problem now (NodeProblem): writes stopped by a failed sync (any store), else its follower's
   * trouble — `follow`, set by `colony serve` and `colony stdio` once their jobs run (never on SQLite).
   */
  readonly node: { follow: () => NodeProblem | null; problem: () => NodeProblem | null };
  /** The client's working directory when MCP runs over stdio (the client started this process there); null over HTTP. */
  readonly cwd: string | null;
  /** Log each call of a tool that changes something (principal, tool, outcome, ms) at info: `colony serve`'s operator log. */
  readonly logCalls: boolean;
}

export function createMcpContext(
  app: App,
  tools: ToolRegistry,
  options: { audit?: AuditLog; confirmations?: Confirmations; cwd?: string | null; logCalls?: boolean } = {},
): McpContext {
  const node: McpContext['node'] = {
    follow: () => null,
    problem: () => writesStopped(app.engine) ?? node.follow(),
  };
  return {
    app,
    tools,
    audit: options.audit ?? AuditLog.open(app.dataDir),
    confirmations: options.confirmations ?? new Confirmations(),
    paths: pathPolicyFor(app),
    version: VERSION,
    auth: new Authenticator(app),
    runtime: { reactor: null },
    node,
    cwd: options.cwd ?? null,
    logCalls: options.logCalls ?? false,
  };
}

export { pathPolicyFor };
export type { NodeProblem };
